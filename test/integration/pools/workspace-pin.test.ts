import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { postSse } from '../../helpers/sse-events';
import { billedEvents } from '../../helpers/usage';
import { poolModel, rndId } from '../../helpers/pool-models';
import { upsertModel, upsertProvider } from '../../../shared/catalog/catalog-ops';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { recordHandedIds } from '../../../shared/tenancy/handed-out-ids';
import type { DeploymentSpec } from '../../../shared/catalog/deployments';
import { Provider } from '../../../shared/db/models';

/**
 * A pool of two Anthropic deployments on providers with different keys (two workspaces): a container,
 * a produced file or a thread's message one of them made is held by its workspace only (the simulator
 * answers 404 not_found_error for a container another key made, as Anthropic does), so a request
 * naming it goes to that workspace's deployment every time, and is refused as not found, nothing sent
 * or billed, when the pool no longer has one (docs/security.md, "Ids the gateway handed out";
 * docs/routing.md, "Ids pin a workspace").
 */
describe('model pools: a handed-out id pins the request to the workspace that made it', function () {
  this.timeout(60_000);
  let o: TestOrg;
  const KEYS = { 'ws-a': `sk-ant-a-${rndId()}`, 'ws-b': `sk-ant-b-${rndId()}` } as const;
  const providers: Record<string, string> = {};
  const BASH = { type: 'code_execution_20250825', name: 'code_execution' };
  const headers = () => ({ ...keyHeader(o.key), 'anthropic-version': '2023-06-01' });
  const sent = () => env().sim.log.entries;

  before(async () => {
    o = await buildOrg(env().redis, { laneOverrides: { 'chat:interactive': 64 } });
    for (const [name, key] of Object.entries(KEYS)) {
      providers[name] = `anthropic-${name}-${rndId()}`;
      await upsertProvider({ name: providers[name], kind: 'anthropic', base_url: env().simUrl, api_key: key } as never);
    }
  });
  beforeEach(resetSim);

  const deployment = (name: 'ws-a' | 'ws-b'): DeploymentSpec => ({ name, provider: providers[name], upstream: `claude-${name}` });
  const twoWorkspaces = () => poolModel([deployment('ws-a'), deployment('ws-b')]);
  /** The pool of `model` made to hold only `keep` (the other deployment removed). */
  async function only(model: string, keep: 'ws-a' | 'ws-b'): Promise<void> {
    await upsertModel({ id: model, deployments: [deployment(keep)], capabilities: { chat: true, vision: true }, prices: { input_token: 1, output_token: 1 } });
    await bumpEpoch(env().redis);
  }
  const other = (d: string) => (d === 'ws-a' ? 'ws-b' : 'ws-a');

  async function post(body: Record<string, unknown>, stream = false): Promise<{ status: number; text: string; deployment: string | null; message: Record<string, any> }> {
    if (!stream) {
      const r = await call('POST', '/v1/messages', { headers: headers(), json: body });
      return { status: r.status, text: r.text, deployment: r.headers.get('x-service-deployment'), message: r.body };
    }
    const r = await postSse('/v1/messages', headers(), { ...body, stream: true });
    const start = r.events.find((e) => e.event === 'message_start')?.data.message;
    const delta = r.events.find((e) => e.event === 'message_delta')?.data.delta;
    return { status: r.status, text: r.text, deployment: r.headers.get('x-service-deployment'), message: start ? { id: start.id, container: delta?.container ?? start.container } : JSON.parse(r.text) };
  }

  /** Refused as not found before anything is sent or billed, JSON and streamed. */
  async function refused(body: Record<string, unknown>, status: number, words: string): Promise<void> {
    const before = await billedEvents(o.org.id);
    const upstream = sent().length;
    for (const stream of [false, true]) {
      const r = await post(body, stream);
      expect(r.status, `stream=${stream} ${r.text}`).to.equal(status);
      expect(r.text).to.include(words);
    }
    expect(sent().length, 'nothing reached an upstream').to.equal(upstream);
    expect(await billedEvents(o.org.id), 'nothing billed').to.equal(before);
  }

  it("the simulator holds a container in its key's workspace only: another key is answered 404 not_found_error", async () => {
    const model = await twoWorkspaces();
    const first = await post({ model, max_tokens: 20, tools: [BASH], messages: [{ role: 'user', content: 'hi' }] });
    expect(first.status, first.text).to.equal(200);
    const maker = first.deployment!;
    const r = await fetch(`${env().simUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': KEYS[other(maker) as 'ws-a'] },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 20, tools: [BASH], container: first.message.container.id, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).to.equal(404);
    expect(((await r.json()) as { error: { type: string } }).error.type).to.equal('not_found_error');
  });

  it('20 follow-ups naming the container all reach the deployment that made it and succeed; with it removed, the follow-up is refused, nothing sent or billed', async () => {
    const model = await twoWorkspaces();
    const first = await post({ model, max_tokens: 20, tools: [BASH], messages: [{ role: 'user', content: 'hi' }] });
    expect(first.status, first.text).to.equal(200);
    const maker = first.deployment!;
    const id = first.message.container.id as string;
    const follow = { model, max_tokens: 20, tools: [BASH], container: id, messages: [{ role: 'user', content: 'again' }] };
    const before = sent().length;
    const turns = await Promise.all(Array.from({ length: 20 }, (_, i) => post(follow, i % 2 === 1)));
    for (const t of turns) {
      expect(t.status, t.text).to.equal(200);
      expect(t.deployment).to.equal(maker);
      expect(t.message.container.id).to.equal(id);
    }
    const calls = sent().slice(before);
    expect(calls).to.have.length(20);
    expect(new Set(calls.map((e) => e.xApiKey))).to.deep.equal(new Set([KEYS[maker as 'ws-a']]));

    await only(model, other(maker) as 'ws-a');
    await refused(follow, 400, `container: container '${id}' not found.`);
  });

  it("a produced file and a thread's message are pinned the same way (404 when their workspace has left the pool)", async () => {
    const model = await twoWorkspaces();
    const made = await post({ model, max_tokens: 20, tools: [BASH], thread: { type: 'create' }, messages: [{ role: 'user', content: 'create a file with the totals' }] });
    expect(made.status, made.text).to.equal(200);
    const maker = made.deployment!;
    const fileId = (made.message.content as Array<Record<string, any>>).find((c) => c.type === 'bash_code_execution_tool_result')!.content.content[0].file_id as string;
    const doc = { model, max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: fileId } }, { type: 'text', text: 'summarise it' }] }] };
    const thread = { model, max_tokens: 20, thread: { type: 'continue', previous_message_id: made.message.id }, messages: [{ role: 'user', content: 'go on' }] };
    for (let i = 0; i < 6; i++) {
      for (const body of [doc, thread]) {
        const r = await post(body, i % 2 === 1);
        expect(r.status, r.text).to.equal(200);
        expect(r.deployment).to.equal(maker);
      }
    }
    await only(model, other(maker) as 'ws-a');
    await refused(doc, 404, `File \`${fileId}\` not found.`);
    await refused(thread, 404, 'thread_not_found');
  });

  it("ids of two workspaces in one request are refused (none holds both); an id recorded before workspaces were (an older worker's) goes to any deployment, as before", async () => {
    const model = await twoWorkspaces();
    await recordHandedIds(env().redis, o.org.id, [{ kind: 'container', id: 'container_in_a', keepMs: 60_000 }], providerIdOf('ws-a'));
    await recordHandedIds(env().redis, o.org.id, [{ kind: 'file', id: 'file_in_b', keepMs: 60_000 }], providerIdOf('ws-b'));
    const both = { model, max_tokens: 20, container: 'container_in_a', tools: [BASH], messages: [{ role: 'user', content: [{ type: 'container_upload', file_id: 'file_in_b' }] }] };
    await refused(both, 400, "container: container 'container_in_a' not found.");

    // a legacy record (no workspace): any deployment may be drawn, as before this change
    await recordHandedIds(env().redis, o.org.id, [{ kind: 'message', id: 'msg_legacy', keepMs: 60_000 }]);
    const legacy = { model, max_tokens: 20, thread: { type: 'continue', previous_message_id: 'msg_legacy' }, messages: [{ role: 'user', content: 'go on' }] };
    const seen = new Set<string | null>();
    for (let i = 0; i < 24 && seen.size < 2; i++) seen.add((await post(legacy)).deployment);
    expect(seen).to.deep.equal(new Set(['ws-a', 'ws-b']));
  });

  const ids: Record<string, string> = {};
  const providerIdOf = (name: string) => ids[name];
  before(async () => {
    for (const name of Object.keys(KEYS)) ids[name] = (await Provider.findOne({ where: { name: providers[name] } }))!.id;
  });
});
