import fs from 'fs';
import os from 'os';
import path from 'path';
import { execFile } from 'child_process';
import { promisify } from 'util';
import { expect } from 'chai';
import { env } from '../../helpers/harness';
import { searchOrg } from './helpers';

/**
 * The MCP project's own conformance suite (`@modelcontextprotocol/conformance`, pinned in
 * devDependencies) against the hosted MCP server, through the real HTTP path. Only the server
 * scenarios that apply to a stateless, tools-only server run: the others target the reference
 * "everything" server's tools, resources, prompts, logging and completions (docs/search.md,
 * *Conformance suite*, has every scenario's verdict). The suite sends no API-key header, so it
 * authenticates by path (`/a/{key}/mcp`). Offline: it talks to this gateway only.
 */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'server-sse-polling', 'server-sse-multiple-streams'];

/**
 * The suite's 0.1.16 build imports `globSync` from `fs` at its top (used only by its `tier-check`
 * command), which Node 20 lacks: the import fails before any scenario runs. On such a Node a module
 * hook drops that one import from the pinned build; a different build fails loudly here.
 */
const HOOK = `export async function load(url, context, next) {
  const r = await next(url, context);
  if (!url.endsWith('/@modelcontextprotocol/conformance/dist/index.js')) return r;
  const src = Buffer.from(r.source).toString('utf8');
  const patched = src.replace('globSync as o,', '');
  if (patched === src) throw new Error('conformance build changed: no globSync import to drop');
  return { format: r.format, source: patched, shortCircuit: true };
}`;

function nodeArgs(): string[] {
  if (typeof (fs as { globSync?: unknown }).globSync === 'function') return [];
  const hook = `data:text/javascript,${encodeURIComponent(HOOK)}`;
  return ['--import', `data:text/javascript,${encodeURIComponent(`import{register}from"node:module";register(${JSON.stringify(hook)});`)}`];
}

describe('hosted MCP server: the official MCP conformance suite (applicable server scenarios)', () => {
  it(`passes ${SCENARIOS.join(', ')}`, async function () {
    this.timeout(90_000);
    const bin = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');
    const o = await searchOrg();
    const url = `${env().gw.url}/a/${o.key}/mcp`;
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-')); // the suite writes results/ under its cwd
    try {
      for (const scenario of SCENARIOS) {
        // async: the gateway under test runs in this process, so a synchronous child would deadlock it
        const run = await promisify(execFile)(process.execPath, [...nodeArgs(), bin, 'server', '--url', url, '--scenario', scenario], { cwd, timeout: 30_000 }).then(
          (r) => ({ code: 0, out: r.stdout + r.stderr }),
          (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
        );
        expect(run.code, `${scenario}:\n${run.out}`).to.equal(0);
        expect(run.out, scenario).to.match(/Passed: \d+\/\d+, 0 failed/);
      }
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
