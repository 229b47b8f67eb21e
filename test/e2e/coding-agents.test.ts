import { spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { expect } from 'chai';
import { env, resetSim } from '../helpers/harness';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { RoutingPlan } from '../../shared/db/models';
import { bumpEpoch } from '../../shared/cache/epoch';

/** The pinned CLIs (package.json devDependencies; README "Coding agents"). */
const claudeWrapper = require.resolve('@anthropic-ai/claude-code/cli-wrapper.cjs');
const codexEntry = require.resolve('@openai/codex/bin/codex.js');
const RUN_MS = 90_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a CLI with nothing of the machine: a fresh HOME (and CODEX_HOME), only PATH kept, telemetry
 * and updates off, and every non-local connection sent to a dead proxy so none leaves the machine.
 */
function runCli(args: string[], extraEnv: Record<string, string>, home: string): Promise<Run> {
  const childEnv: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: home,
    LANG: 'C.UTF-8',
    HTTPS_PROXY: 'http://127.0.0.1:9',
    HTTP_PROXY: 'http://127.0.0.1:9',
    NO_PROXY: '127.0.0.1,localhost',
    ...extraEnv,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: home, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const tempHome = () => fs.mkdtempSync(path.join(os.tmpdir(), 'gw-agent-'));

function claude(model: string, key: string, prompt: string): Promise<Run> {
  return runCli([claudeWrapper, '-p', prompt, '--model', model], {
    ANTHROPIC_BASE_URL: env().gw.url,
    ANTHROPIC_API_KEY: key,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  }, tempHome());
}

function codex(model: string, key: string, prompt: string, base = env().gw.url): Promise<Run> {
  const home = tempHome();
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "gateway"',
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[model_providers.gateway]',
      'name = "gateway"',
      `base_url = "${base}/v1"`,
      'env_key = "GATEWAY_API_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  return runCli([codexEntry, 'exec', '--skip-git-repo-check', '--color', 'never', prompt], { CODEX_HOME: home, GATEWAY_API_KEY: key }, home);
}

const upstreamPaths = () => new Set(env().sim.log.entries.map((e) => e.path));

/** Claude Code and Codex CLI, as their users install them, against the test gateway (issue 27 §3). */
describe('coding agents end to end (claude -p, codex exec)', function () {
  this.timeout(2 * RUN_MS + 30_000);
  let o: TestOrg;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });

  for (const [model, upstream] of [
    ['sim-claude', '/v1/messages'],
    ['sim-chat', '/v1/chat/completions'],
  ] as const) {
    it(`claude -p completes on ${model} (upstream ${upstream})`, async () => {
      const r = await claude(model, o.key, 'Greet the gateway e2e run');
      expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).to.equal(0);
      expect(r.stdout).to.include('Simulated reply:');
      expect([...upstreamPaths()]).to.deep.equal([upstream]);
    });

    it(`codex exec completes on ${model} (upstream ${upstream})`, async () => {
      const r = await codex(model, o.key, 'Greet the gateway e2e run');
      expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).to.equal(0);
      expect(r.stdout).to.include('Simulated reply:');
      expect(r.stdout).to.include('Greet the gateway e2e run');
      expect([...upstreamPaths()]).to.deep.equal([upstream]);
    });
  }

  it('codex exec completes on a model id Codex knows (gpt-5.5, a routing-plan alias of sim-chat): custom apply_patch and a client tool search', async () => {
    const plan = await RoutingPlan.create({ orgId: o.org.id, name: 'codex-plan', modelMap: { 'gpt-5.5': 'sim-chat' }, projectId: null } as never);
    await bumpEpoch(env().redis);
    const r = await codex('gpt-5.5', o.key, 'Greet the gateway e2e run', `${env().gw.url}/r/${plan.id}`);
    expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).to.equal(0);
    expect(r.stdout).to.include('Simulated reply:');
    const sent = env().sim.log.entries.map((e) => e.body as { tools?: Array<{ function: { name: string } }> });
    expect(sent).to.have.length(1);
    expect(sent[0].tools!.map((t) => t.function.name)).to.include.members(['apply_patch', 'tool_search', 'web_search']);
  });
});
