import { spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { env } from './harness';

/** The pinned CLIs (package.json devDependencies; README "Coding agents"). */
const claudeWrapper = require.resolve('@anthropic-ai/claude-code/cli-wrapper.cjs');
const codexEntry = require.resolve('@openai/codex/bin/codex.js');
export const RUN_MS = 90_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh directory standing for the CLI's HOME (and its working directory). */
export const tempHome = () => fs.mkdtempSync(path.join(os.tmpdir(), 'gw-agent-'));

/**
 * Runs a CLI with nothing of the machine: a fresh HOME (and CODEX_HOME), only PATH kept, telemetry
 * and updates off, and every non-local connection sent to a dead proxy so none leaves the machine.
 */
function runCli(args: string[], extraEnv: Record<string, string>, home: string, timeoutMs = RUN_MS): Promise<Run> {
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
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** How a CLI is run: extra arguments, its HOME and cwd (a fresh one by default), when it is killed (RUN_MS by default). */
export interface CliOptions {
  args?: string[];
  home?: string;
  timeoutMs?: number;
}

/** `claude -p prompt --model model [...args]` against the gateway. */
export function claude(model: string, key: string, prompt: string, opts: CliOptions = {}): Promise<Run> {
  return runCli([claudeWrapper, '-p', prompt, '--model', model, ...(opts.args ?? [])], {
    ANTHROPIC_BASE_URL: env().gw.url,
    ANTHROPIC_API_KEY: key,
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  }, opts.home ?? tempHome(), opts.timeoutMs);
}

/** `codex exec [...args] prompt` against the gateway (`base`, a Responses provider; HOME is also CODEX_HOME). */
export function codex(model: string, key: string, prompt: string, opts: CliOptions & { base?: string } = {}): Promise<Run> {
  const home = opts.home ?? tempHome();
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
      `base_url = "${opts.base ?? env().gw.url}/v1"`,
      'env_key = "GATEWAY_API_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  const args = [codexEntry, 'exec', '--skip-git-repo-check', '--color', 'never', ...(opts.args ?? []), prompt];
  return runCli(args, { CODEX_HOME: home, GATEWAY_API_KEY: key }, home, opts.timeoutMs);
}
