import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { expectResponsesEvent, responsesEventForDocument } from '../../helpers/conformance';
import { usageSettled } from '../../helpers/usage';
import { waitFor } from '../../helpers/wait';
import { UsageEvent } from '../../../shared/db/models';
import { createApiKey, revokeApiKey } from '../../../shared/tenancy/ops';
import { backgroundSuite, ended, expectRefused, outcome } from '../../helpers/responses-background';

type Event = OpenAI.Responses.ResponseStreamEvent;

/** Every event of a stream, in order. */
async function all(stream: AsyncIterable<Event>): Promise<Event[]> {
  const out: Event[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

/** The text an event list's output_text deltas add up to. */
const deltas = (evs: Event[]) => evs.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('');

/**
 * Background responses with `stream: true` (OpenAI's background mode, streamed): the events as the
 * run makes them, kept so that `GET /v1/responses/{id}?stream=true&starting_after=N` resumes them on any
 * pod; the client leaving stops nothing.
 */
describe('background responses, streamed', () => {
  const s = backgroundSuite();
  let viaB: OpenAI;
  before(() => {
    viaB = new OpenAI({ apiKey: s.o.key, baseURL: `${s.podB.url}/v1`, maxRetries: 0 });
  });

  it('streams created and queued, then in_progress, the deltas and completed; the stored response is completed; GET ?stream=true replays them on any pod, from starting_after; billed once', async function () {
    this.timeout(30_000);
    const fresh = await buildOrg(env().redis);
    const c = new OpenAI({ apiKey: fresh.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const evs = await all(await c.responses.create({ model: 'sim-chat', input: 'stream me some otters', background: true, stream: true }));
    expect(evs.slice(0, 3).map((e) => e.type)).to.deep.equal(['response.created', 'response.queued', 'response.in_progress']);
    const [created, queued, running] = evs as Array<Event & { response: OpenAI.Responses.Response }>;
    expect([created.response.status, queued.response.status, running.response.status]).to.deep.equal(['queued', 'queued', 'in_progress']);
    expect(created.response.background).to.equal(true);
    expect(evs.at(-1)!.type).to.equal('response.completed');
    expect(evs.map((e) => e.sequence_number)).to.deep.equal(evs.map((_, i) => i));
    for (const e of evs) expectResponsesEvent(responsesEventForDocument(e as unknown as Record<string, unknown> & { response?: unknown }));
    const id = created.response.id;
    const done = await c.responses.retrieve(id);
    expect(done.status).to.equal('completed');
    expect(done.output_text).to.equal(deltas(evs)).and.to.include('otters');

    const viaBFresh = new OpenAI({ apiKey: fresh.key, baseURL: `${s.podB.url}/v1`, maxRetries: 0 });
    expect(await all(await viaBFresh.responses.retrieve(id, { stream: true })), 'replayed whole on another pod').to.deep.equal(evs);
    const rest = await all(await c.responses.retrieve(id, { stream: true, starting_after: 3 }));
    expect(rest, 'after sequence number 3').to.deep.equal(evs.slice(4));
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: fresh.org.id } }), 'one request, one usage event').to.equal(1);
  });

  it('the s.client leaving stops nothing: a follower on another pod resumes after the last event it had and gets the rest as the run makes them', async function () {
    this.timeout(30_000);
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const seen = env().sim.log.entries.length;
    const leaving = new AbortController();
    const first = await s.client.responses.create({ model: 'sim-chat', input: 'keep going without me', background: true, stream: true }, { signal: leaving.signal });
    const had: Event[] = [];
    for await (const ev of first) {
      had.push(ev);
      if (ev.type === 'response.queued') break; // the SDK closes the connection
    }
    leaving.abort();
    const id = (had[0] as Event & { response: OpenAI.Responses.Response }).response.id;
    expect(await waitFor(() => env().sim.log.entries.length > seen, 10_000), 'it reached the upstream').to.equal(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(env().sim.log.entries.at(-1)!.aborted, 'the upstream request goes on').to.not.equal(true);
    expect((await s.client.responses.retrieve(id)).status).to.equal('in_progress');

    const following = all(await viaB.responses.retrieve(id, { stream: true, starting_after: had.at(-1)!.sequence_number }));
    await new Promise((r) => setTimeout(r, 300));
    env().sim.knobs.release();
    const rest = await following;
    expect(rest[0]).to.include({ type: 'response.in_progress', sequence_number: 2 });
    expect(rest.at(-1)!.type).to.equal('response.completed');
    expect(deltas(rest)).to.include('keep going without me');
    expect((await s.client.responses.retrieve(id)).status).to.equal('completed');
  });

  it('a cancel ends the stream and its followers without a last event; an upstream failure ends it with response.failed, stored failed', async function () {
    this.timeout(30_000);
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const own = await s.client.responses.create({ model: 'sim-chat', input: 'cancel me mid-stream', background: true, stream: true });
    const it = own[Symbol.asyncIterator]();
    const created = (await it.next()).value as Event & { response: OpenAI.Responses.Response };
    const id = created.response.id;
    const follower = all(await viaB.responses.retrieve(id, { stream: true }));
    expect(await waitFor(() => env().sim.log.entries.length > 0, 10_000)).to.equal(true);
    expect((await viaB.responses.cancel(id)).status).to.equal('cancelled');
    const ownRest: Event[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) ownRest.push(r.value);
    expect(ownRest.map((e) => e.type), 'the request’s own stream: queued, then its end').to.deep.equal(['response.queued']);
    expect((await follower).map((e) => e.type)).to.deep.equal(['response.created', 'response.queued']);
    expect((await s.client.responses.retrieve(id)).status).to.equal('cancelled');
    expect(await waitFor(() => env().sim.log.entries.at(-1)!.aborted === true, 10_000), 'the upstream request was aborted').to.equal(true);
    env().sim.knobs.reset();

    env().sim.knobs.set('sim-chat-1', { status: 400 });
    const evs = await all(await s.client.responses.create({ model: 'sim-chat', input: 'refused upstream', background: true, stream: true }));
    expect(evs.map((e) => e.type)).to.deep.equal(['response.created', 'response.queued', 'response.in_progress', 'response.failed']);
    const failedId = (evs[0] as Event & { response: OpenAI.Responses.Response }).response.id;
    expect((await ended(s.client, failedId)).status).to.equal('failed');
    expect((await all(await s.client.responses.retrieve(failedId, { stream: true }))).map((e) => e.type).at(-1)).to.equal('response.failed');
  });

  it("a follower whose key is revoked while it follows is stopped with an error event (INVALID_API_KEY) and gets none of the run's later events; the run goes on for its own key", async function () {
    this.timeout(30_000);
    env().sim.knobs.set('sim-chat-1', { hold: true });
    const other = await createApiKey(env().redis, { orgId: s.o.org.id });
    const own = await s.client.responses.create({ model: 'sim-chat', input: 'followed by a key about to be revoked', background: true, stream: true });
    const it = own[Symbol.asyncIterator]();
    const id = ((await it.next()).value as Event & { response: OpenAI.Responses.Response }).response.id;
    expect(await waitFor(() => env().sim.log.entries.length > 0, 10_000)).to.equal(true);
    const follower = new OpenAI({ apiKey: other.key, baseURL: `${s.podB.url}/v1`, maxRetries: 0 });
    const seen: Event[] = [];
    const following = (async () => {
      for await (const ev of await follower.responses.retrieve(id, { stream: true })) seen.push(ev);
    })().then(() => undefined, (err: unknown) => err);
    await new Promise((r) => setTimeout(r, 300));
    await revokeApiKey(env().redis, other.id);
    // stopped at its next check of the key (every 5 s), while the run is still held
    const err = (await Promise.race([following, new Promise((r) => setTimeout(() => r({ message: 'still following' }), 9_000))])) as { message?: string } | undefined;
    expect(err?.message, 'the SDK raises the error event').to.match(/no longer works/);
    env().sim.knobs.release();
    await following;
    const ownRest: Event[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) ownRest.push(r.value);
    expect(ownRest.at(-1)!.type, "the creator's own stream runs to its end").to.equal('response.completed');
    expect((await ended(s.client, id)).status).to.equal('completed');
    expect(seen.map((e) => e.type)).to.not.include('response.completed');
    expect(seen.map((e) => e.type)).to.not.include('response.output_text.delta');
  });

  it('GET ?stream=true refuses a response with no events (not background, or not streamed) and a bad starting_after; an unknown id is 404', async function () {
    this.timeout(30_000);
    const plain = await s.client.responses.create({ model: 'sim-chat', input: 'x' });
    expectRefused(await outcome(s.client.responses.retrieve(plain.id, { stream: true })), 400, 'stream');
    const polled = await s.client.responses.create({ model: 'sim-chat', input: 'x', background: true });
    expect((await ended(s.client, polled.id)).status).to.equal('completed');
    expectRefused(await outcome(s.client.responses.retrieve(polled.id, { stream: true })), 400, 'stream');
    const bad = await call('GET', `/v1/responses/${polled.id}?stream=true&starting_after=abc`, { headers: keyHeader(s.o.key) });
    expect([bad.status, bad.body.error.param]).to.deep.equal([400, 'starting_after']);
    const missing = await outcome(s.client.responses.retrieve('resp_nope', { stream: true }));
    expect((missing as InstanceType<typeof OpenAI.APIError>).status).to.equal(404);
  });
});
