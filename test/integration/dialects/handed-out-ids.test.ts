import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { billedEvents } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { keys } from '../../../shared/redis/keys';
import { MAX_PER_ORG, ownedHandedIds, recordHandedIds } from '../../../shared/tenancy/handed-out-ids';
import { startBatchWorker } from '../../../workers/batch/main';

/**
 * The native bypass refuses ids Anthropic resolves in the platform's shared workspace
 * (shared-account-ids.test.ts), but those the gateway handed the asking organization itself: its
 * container (the answer's `container.id`), a file its code execution produced
 * (`bash_code_execution_output.file_id`, `code_execution_output.file_id`) and a thread's message id
 * (docs/security.md, "Ids an upstream resolves"). The simulated Claude answers with a container when
 * offered a code execution tool, and runs it when asked to create a file (scripts/simulator/code-execution.ts).
 */
describe('native bypass: an organization names the ids the gateway handed it, and only it', () => {
  let a: TestOrg;
  let b: TestOrg;
  before(async () => {
    a = await buildOrg(env().redis);
    b = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  const sent = () => env().sim.log.entries;
  const headers = (o: TestOrg) => ({ ...keyHeader(o.key), 'anthropic-version': '2023-06-01' });
  const BASH = { type: 'code_execution_20250825', name: 'code_execution' };
  const req = (extra: Record<string, unknown>, content: unknown = 'hi') => ({ model: 'sim-claude', max_tokens: 30, messages: [{ role: 'user', content }], ...extra });
  const post = (o: TestOrg, body: Record<string, unknown>) => call('POST', '/v1/messages', { headers: headers(o), json: body });

  /** The answer of a JSON or streamed request, as the client assembles it: its id, container and content blocks. */
  async function answer(o: TestOrg, body: Record<string, unknown>, stream: boolean): Promise<{ id: string; container: { id: string } | null; content: Array<Record<string, unknown>> }> {
    if (!stream) {
      const r = await post(o, body);
      expect(r.status, r.text).to.equal(200);
      return r.body;
    }
    const r = await postSse('/v1/messages', headers(o), { ...body, stream: true });
    expect(r.status, r.text).to.equal(200);
    const start = r.events.find((e) => e.event === 'message_start')!.data.message;
    const delta = r.events.find((e) => e.event === 'message_delta')!.data.delta;
    const content = r.events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block);
    return { id: start.id, container: delta.container ?? start.container, content };
  }

  /** B naming A's id: refused as any never-handed-out id, nothing sent upstream or billed. */
  async function refusedFor(o: TestOrg, body: Record<string, unknown>, words: string): Promise<void> {
    const before = await billedEvents(o.org.id);
    const upstream = sent().length;
    // a thread it cannot continue is Anthropic's 404 thread_not_found (the SDK's thread helper replays the history on it), a file its 404 too
    const thread = words.startsWith('thread.');
    const notFound = thread ? 'thread_not_found' : words.startsWith('File `') ? 'file_not_found' : undefined;
    for (const stream of [false, true]) {
      const r: Reply = await post(o, stream ? { ...body, stream } : body);
      expect(r.status, `stream=${stream} ${r.text}`).to.equal(notFound ? 404 : 400);
      expect(r.body.error).to.include(notFound ? { type: 'not_found_error', code: notFound } : { type: 'invalid_request_error', code: 'invalid_request' });
      if (thread) expect(r.body.error.details).to.deep.equal({ error_code: 'thread_not_found' });
      expect(r.body.error.message).to.include(words);
    }
    expect(sent().length, 'nothing reached the upstream').to.equal(upstream);
    expect(await billedEvents(o.org.id), 'nothing billed').to.equal(before);
  }

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'JSON';

    it(`${how}: the container an answer names is its org's to reuse (sent upstream as given); another org is refused, nothing sent or billed`, async () => {
      const first = await answer(a, req({ tools: [BASH] }), stream);
      const id = first.container!.id;
      expect(id).to.match(/^container_sim/);
      for (const container of [id, { id }]) {
        const again = await answer(a, req({ tools: [BASH], container }), stream);
        expect(again.container!.id).to.equal(id);
        expect(sent().at(-1)!.body).to.deep.include({ container });
      }
      await refusedFor(b, req({ tools: [BASH], container: id }), `container: container '${id}' not found.`);
      await refusedFor(b, req({ tools: [BASH], container: { id } }), `container: container '${id}' not found.`);
    });

    it(`${how}: a file the code execution produced is its org's to send back (a document source, a container_upload block); another org is refused`, async () => {
      const made = await answer(a, req({ tools: [BASH] }, 'create a file with the totals'), stream);
      const result = made.content.find((c) => c.type === 'bash_code_execution_tool_result') as { content: { content: Array<{ type: string; file_id: string }> } };
      const fileId = result.content.content[0].file_id;
      expect(fileId).to.match(/^file_sim/);
      const doc = [{ type: 'document', source: { type: 'file', file_id: fileId } }, { type: 'text', text: 'summarise it' }];
      const upload = [{ type: 'container_upload', file_id: fileId }, { type: 'text', text: 'run it' }];
      for (const content of [doc, upload]) {
        const before = sent().length;
        await answer(a, req({ tools: [BASH] }, content), stream);
        expect(sent()).to.have.length(before + 1);
        expect((sent().at(-1)!.body as { messages: unknown }).messages).to.deep.equal([{ role: 'user', content }]);
      }
      await refusedFor(b, req({}, doc), `File \`${fileId}\` not found.`);
      await refusedFor(b, req({ tools: [BASH] }, upload), `File \`${fileId}\` not found.`);
      // a kind of id is not another's: A's container named as a file is refused to A too
      await refusedFor(a, req({}, [{ type: 'document', source: { type: 'file', file_id: made.container!.id } }]), `File \`${made.container!.id}\` not found.`);
    });

    it(`${how}: a thread's message id continues that org's thread; an answer outside a thread hands none; another org is refused`, async () => {
      const first = await answer(a, req({ thread: { type: 'create' } }), stream);
      const next = await answer(a, req({ thread: { type: 'continue', previous_message_id: first.id } }), stream);
      expect((sent().at(-1)!.body as { thread: unknown }).thread).to.deep.equal({ type: 'continue', previous_message_id: first.id });
      // the continued answer's own id continues the thread in turn
      await answer(a, req({ thread: { type: 'continue', previous_message_id: next.id } }), stream);
      await refusedFor(b, req({ thread: { type: 'continue', previous_message_id: first.id } }), `thread.previous_message_id: message '${first.id}' not found.`);
      const plain = await answer(a, req({}), stream);
      await refusedFor(a, req({ thread: { type: 'continue', previous_message_id: plain.id } }), `thread.previous_message_id: message '${plain.id}' not found.`);
    });
  }

  it("the 2025-05-22 tool's produced file (code_execution_output) is handed out too; the official client reuses its container from a stream", async () => {
    const client = new Anthropic({ apiKey: a.key, baseURL: env().gw.url, maxRetries: 0 });
    const tools = [{ type: 'code_execution_20250522', name: 'code_execution' }] as never;
    const made = await client.beta.messages.create({ model: 'sim-claude', max_tokens: 30, tools, messages: [{ role: 'user', content: 'write a file of squares' }] });
    const result = made.content.find((c) => c.type === 'code_execution_tool_result') as Anthropic.Beta.BetaCodeExecutionToolResultBlock;
    const fileId = (result.content as Anthropic.Beta.BetaCodeExecutionResultBlock).content[0].file_id;
    const final = await client.beta.messages.stream({ model: 'sim-claude', max_tokens: 30, tools, container: made.container!.id, messages: [{ role: 'user', content: [{ type: 'container_upload', file_id: fileId }] }] }).finalMessage();
    expect(final.container?.id).to.equal(made.container!.id);
    const other = new Anthropic({ apiKey: b.key, baseURL: env().gw.url, maxRetries: 0 });
    const err = await other.beta.messages.create({ model: 'sim-claude', max_tokens: 30, tools, container: made.container!.id, messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.BadRequestError);
  });

  it('an answer without such ids records nothing; the ids are kept per org, until their expiry, at most MAX_PER_ORG', async () => {
    const c = await buildOrg(env().redis);
    await answer(c, req({}), false);
    await answer(c, req({}), true);
    expect(await env().redis.exists(keys.handedOutIds(c.org.id)), 'no key for an answer without ids').to.equal(0);

    const redis = env().redis;
    await recordHandedIds(redis, c.org.id, [{ kind: 'container', id: 'container_short', keepMs: 150 }, { kind: 'file', id: 'file_long', keepMs: 60_000 }]);
    expect(await ownedHandedIds(redis, c.org.id, [{ kind: 'container', id: 'container_short' }, { kind: 'file', id: 'file_long' }, { kind: 'container', id: 'file_long' }])).to.deep.equal([{ workspace: null }, { workspace: null }, false]);
    await waitFor(async () => !(await ownedHandedIds(redis, c.org.id, [{ kind: 'container', id: 'container_short' }]))[0] || undefined, 2000, 20);
    expect(await ownedHandedIds(redis, c.org.id, [{ kind: 'file', id: 'file_long' }])).to.deep.equal([{ workspace: null }]);
    const ttl = await redis.pttl(keys.handedOutIds(c.org.id));
    expect(ttl).to.be.within(1, 60_000);

    // past the bound, the soonest to expire go first
    const many = Array.from({ length: MAX_PER_ORG }, (_, i) => ({ kind: 'file' as const, id: `file_n${i}`, keepMs: 120_000 + i }));
    await recordHandedIds(redis, c.org.id, many);
    expect(await redis.zcard(keys.handedOutIds(c.org.id))).to.equal(MAX_PER_ORG);
    expect(await ownedHandedIds(redis, c.org.id, [{ kind: 'file', id: 'file_long' }, { kind: 'file', id: `file_n${MAX_PER_ORG - 1}` }])).to.deep.equal([false, { workspace: null }]);
  });

  it('each id is kept with the workspace that made it (the answering provider); a member an older worker wrote (no workspace) reads as before; what leaves the set leaves the workspaces too', async () => {
    const c = await buildOrg(env().redis);
    const redis = env().redis;
    // the answering deployment's provider (sim-claude's) is recorded with its container
    const first = await answer(c, req({ tools: [BASH] }), false);
    const [made] = await ownedHandedIds(redis, c.org.id, [{ kind: 'container', id: first.container!.id }]);
    expect(made).to.have.property('workspace').that.is.a('string');
    // an older worker's record: the member alone, no workspace
    await redis.zadd(keys.handedOutIds(c.org.id), Date.now() + 60_000, 'f:file_old');
    expect(await ownedHandedIds(redis, c.org.id, [{ kind: 'file', id: 'file_old' }])).to.deep.equal([{ workspace: null }]);
    await recordHandedIds(redis, c.org.id, [{ kind: 'file', id: 'file_p1', keepMs: 150 }], 'p1');
    expect(await ownedHandedIds(redis, c.org.id, [{ kind: 'file', id: 'file_p1' }, { kind: 'container', id: 'file_p1' }])).to.deep.equal([{ workspace: 'p1' }, false]);
    // expired, then trimmed past the bound: their workspaces go with them
    await new Promise((r) => setTimeout(r, 200));
    const many = Array.from({ length: MAX_PER_ORG + 10 }, (_, i) => ({ kind: 'file' as const, id: `file_w${i}`, keepMs: 120_000 + i }));
    await recordHandedIds(redis, c.org.id, many, 'p2');
    const ws = keys.handedOutWorkspaces(c.org.id);
    expect(await redis.hexists(ws, 'f:file_p1')).to.equal(0);
    expect(await redis.hlen(ws)).to.equal(MAX_PER_ORG);
    expect(await redis.hget(ws, `f:file_w${MAX_PER_ORG + 9}`)).to.equal('p2');
    expect(await redis.pttl(ws), 'expires with the set (its container, an hour)').to.be.within(1, 3_600_000);
    // fields an older worker's script left behind (it trims the set alone) are swept on the next record
    await redis.zrem(keys.handedOutIds(c.org.id), 'f:file_w100', 'f:file_w101');
    await recordHandedIds(redis, c.org.id, [{ kind: 'file', id: 'file_w100', keepMs: 1000 }], '');
    expect(await redis.hexists(ws, 'f:file_w101')).to.equal(0);
    // a record without a workspace leaves the one known (the same id is made by one workspace)
    expect(await ownedHandedIds(redis, c.org.id, [{ kind: 'file', id: 'file_w100' }])).to.deep.equal([{ workspace: 'p2' }]);
  });

  it('a Message Batches line reuses its own org\'s container; another org\'s line naming it is errored, unbilled', async function () {
    this.timeout(90_000);
    const worker = await startBatchWorker();
    try {
      const first = await answer(a, req({ tools: [BASH] }), false);
      const id = first.container!.id;
      const run = async (o: TestOrg) => {
        const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
        const created = await client.messages.batches.create({ requests: [{ custom_id: 'reuse', params: req({ tools: [BASH], container: id }) as never }] });
        await waitFor(async () => (await client.messages.batches.retrieve(created.id)).processing_status === 'ended' || undefined, 60_000, 200);
        const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
        for await (const r of await client.messages.batches.results(created.id)) results.push(r);
        return results[0].result;
      };
      const mine = await run(a);
      expect(mine.type, JSON.stringify(mine)).to.equal('succeeded');
      expect((mine as { message: { container: { id: string } } }).message.container.id).to.equal(id);
      const before = await billedEvents(b.org.id);
      const upstream = sent().length;
      const theirs = await run(b);
      expect(theirs.type).to.equal('errored');
      expect(JSON.stringify(theirs)).to.include(`container: container '${id}' not found.`);
      expect(sent().length, 'nothing sent').to.equal(upstream);
      expect(await billedEvents(b.org.id), 'nothing billed').to.equal(before);
    } finally {
      await worker.close();
    }
  });
});
