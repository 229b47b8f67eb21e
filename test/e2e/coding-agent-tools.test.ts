import crypto from 'crypto';
import fs from 'fs';
import path from 'path';
import { expect } from 'chai';
import { env, resetSim } from '../helpers/harness';
import { buildOrg, type TestOrg } from '../helpers/factories';
import { claude, codex, tempHome, type Run } from '../helpers/coding-agents';
import { ScriptedUpstream, type Received } from '../helpers/scripted-upstream';
import { imagesIn, PREAMBLE, scriptToolLoop, toolNames, toolResults, type Call } from '../helpers/agent-loop-upstream';
import { pngOf } from '../helpers/images';

/** A case's cap; the CLI is killed before it. */
const CASE_MS = 60_000;
const CLI_MS = 45_000;
const KINDS = ['anthropic', 'openai'] as const;
type Kind = (typeof KINDS)[number];

const SECRET = /agentloop-[0-9a-f]{16}/;

/** A fresh HOME (the CLI's cwd) with `n` files, each holding a secret only a tool that read it can know. */
function homeWithSecrets(n: number): { home: string; files: string[]; secrets: string[] } {
  const home = tempHome();
  const secrets = Array.from({ length: n }, () => `agentloop-${crypto.randomBytes(8).toString('hex')}`);
  const files = secrets.map((secret, i) => {
    const file = path.join(home, `secret${i}.txt`);
    fs.writeFileSync(file, `${secret}\n`);
    return file;
  });
  return { home, files, secrets };
}

type Sent = { role: string; content: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> };

const digest = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex').slice(0, 16);

/** A fresh HOME (the CLI's cwd) with a PNG of a random colour, and its digest. */
async function homeWithPicture(): Promise<{ home: string; file: string; digest: string }> {
  const home = tempHome();
  const file = path.join(home, 'pic.png');
  const png = await pngOf(16, 16, [0, 1, 2].map(() => crypto.randomInt(256)) as [number, number, number]);
  fs.writeFileSync(file, png);
  return { home, file, digest: digest(png) };
}

/** The assistant turn that made `calls`, as the client sent it back: its block types in order (chat: none), its text and its calls (id, name, input). */
function turnSentBack(kind: Kind, req: Received, calls: Call[]): { types: string[]; text: string; calls: Call[] } | undefined {
  const ids = new Set(calls.map((c) => c.id));
  for (const m of req.body.messages as Sent[]) {
    if (m.role !== 'assistant') continue;
    const blocks = Array.isArray(m.content) ? (m.content as Array<{ type: string; text?: string; id: string; name: string; input: Record<string, unknown> }>) : [];
    const made =
      kind === 'openai'
        ? (m.tool_calls ?? []).map((t) => ({ id: t.id, name: t.function.name, input: JSON.parse(t.function.arguments) }))
        : blocks.filter((b) => b.type === 'tool_use').map(({ id, name, input }) => ({ id, name, input }));
    if (!made.some((c) => ids.has(c.id))) continue;
    const text = typeof m.content === 'string' ? m.content : blocks.filter((b) => b.type === 'text').map((b) => b.text).join('');
    return { types: blocks.map((b) => b.type), text, calls: made };
  }
  return undefined;
}

/**
 * Checks one tool loop: two streamed upstream requests, the first offering the tool and carrying no
 * result; the second sending back the assistant turn (its block types, its text, and each call with
 * its id, name and input) and a result of each call; and the CLI printing the upstream's final answer.
 */
function expectLoop(kind: Kind, up: ScriptedUpstream, r: Run, calls: Call[], printed: string, types: string[]): Map<string, string> {
  const why = `stdout: ${r.stdout}\nstderr: ${r.stderr.slice(-3000)}`;
  expect(r.code, why).to.equal(0);
  expect(up.received.map((q) => q.body?.stream), why).to.deep.equal([true, true]);
  expect(toolNames(up.received[0].body)).to.include(calls[0].name);
  expect(toolResults(kind, up.received[0].body).size).to.equal(0);
  expect(turnSentBack(kind, up.received[1], calls)).to.deep.equal({ types, text: PREAMBLE, calls });
  const results = toolResults(kind, up.received[1].body);
  expect([...results.keys()]).to.include.members(calls.map((c) => c.id));
  expect(r.stdout.trim()).to.equal(printed);
  return results;
}

/** The block types the assistant turn goes back with: Claude Code turns thinking on, so an Anthropic upstream thinks and gets its signed thinking back first; chat turns have none. */
const turnTypes = (kind: Kind, cli: 'claude' | 'codex', calls: Call[]) => (kind === 'openai' ? [] : [...(cli === 'claude' ? ['thinking'] : []), 'text', ...calls.map(() => 'tool_use')]);

/** The final answer to a picture: the digest of each image the request carries. */
const pictureAnswer = (_: string[], body: Received['body']) => `The pictures are ${imagesIn(body).map(digest).join(' and ') || 'none'}.`;

/** The final answer: what the tool results said, in call order. */
const quote = (results: string[]) => `The files say ${results.map((t) => SECRET.exec(t)?.[0] ?? 'nothing').join(' and ')}.`;
const BYPASS = ['--dangerously-bypass-approvals-and-sandbox'];
const callId = (kind: Kind, n: number) => (kind === 'anthropic' ? `toolu_01Loop${n}A1b2C3d4E5` : `call_loop${n}a1b2c3d4e5`);

/**
 * Claude Code and Codex CLI running tools the upstream asked for (reading files, running a command,
 * looking at a picture; one call or two in parallel) and answering with their results, through the gateway's translation both ways (docs/dialects.md,
 * "Coding agents in a tool loop").
 */
describe('coding agents in a tool loop (claude -p, codex exec)', function () {
  this.timeout(CASE_MS);
  let o: TestOrg;
  let up: ScriptedUpstream;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
  });
  afterEach(() => up?.close());

  for (const kind of KINDS) {
    for (const n of [1, 2]) {
      it(`claude -p reads ${n} file(s) with Read and answers with them (${kind}-kind upstream, streamed)`, async () => {
        up = await ScriptedUpstream.start(kind);
        const { home, files, secrets } = homeWithSecrets(n);
        const calls = files.map((file_path, i) => ({ id: callId(kind, i), name: 'Read', input: { file_path } }));
        scriptToolLoop(up, calls, quote);
        const r = await claude(await up.model(), o.key, 'What do the secret files say?', { home, timeoutMs: CLI_MS });
        const results = expectLoop(kind, up, r, calls, quote(secrets), turnTypes(kind, 'claude', calls));
        calls.forEach((c, i) => expect(results.get(c.id)).to.include(secrets[i]));
      });

      it(`codex exec runs ${n} exec_command call(s) and answers with their output (${kind}-kind upstream, streamed)`, async () => {
        up = await ScriptedUpstream.start(kind);
        const { home, secrets } = homeWithSecrets(n);
        const calls = secrets.map((_, i) => ({ id: callId(kind, i), name: 'exec_command', input: { cmd: `cat secret${i}.txt` } }));
        scriptToolLoop(up, calls, quote);
        const r = await codex(await up.model(), o.key, 'What do the secret files say?', { home, args: BYPASS, timeoutMs: CLI_MS });
        const results = expectLoop(kind, up, r, calls, quote(secrets), turnTypes(kind, 'codex', calls));
        calls.forEach((c, i) => expect(results.get(c.id)).to.include(secrets[i]));
      });
    }

    // the tool returns an image: the upstream must get its bytes (Codex's view_image output reached no upstream before)
    for (const [cli, name] of [['claude', 'Read'], ['codex', 'view_image']] as const) {
      it(`${cli} ${cli === 'claude' ? '-p' : 'exec'} looks at a picture with ${name} and answers with it (${kind}-kind upstream, streamed)`, async () => {
        up = await ScriptedUpstream.start(kind);
        const { home, file, digest: d } = await homeWithPicture();
        const calls = [{ id: callId(kind, 0), name, input: cli === 'claude' ? { file_path: file } : { path: file } }];
        scriptToolLoop(up, calls, pictureAnswer);
        const model = await up.model();
        const r = cli === 'claude' ? await claude(model, o.key, 'What is in pic.png?', { home, timeoutMs: CLI_MS }) : await codex(model, o.key, 'What is in pic.png?', { home, args: BYPASS, timeoutMs: CLI_MS });
        expectLoop(kind, up, r, calls, `The pictures are ${d}.`, turnTypes(kind, cli, calls));
      });
    }
  }
});
