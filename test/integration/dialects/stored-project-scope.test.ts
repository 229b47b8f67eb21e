import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import type { TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { twoProjects } from '../../helpers/openai-org';

/** What the SDK's call rejects with, or 'answered'. */
const outcome = (p: Promise<unknown>) => p.then(() => 'answered' as const, (e: unknown) => e);

function expectRefused(err: unknown, status: number, code: string, what: string): void {
  expect(err, what).to.be.instanceOf(OpenAI.APIError);
  expect(err, what).to.include({ status, code });
}

/**
 * Stored chat completions, stored responses and conversations belong to the project of the request
 * that made them: as an OpenAI project key reaches only its project's objects, a key bound to one
 * project (or a request naming one with SERVICE-PROJECT-ID) finds none of another project's; a
 * request without a project finds the whole organization's (shared/tenancy/store-scope.ts).
 */
describe('stored objects: scoped to the request’s project', () => {
  const s = twoProjects();
  let o: TestOrg;
  let mine: OpenAI; // bound to project A
  let theirs: OpenAI; // bound to project B
  let orgWide: OpenAI; // no project
  let namingB: OpenAI; // the org-wide key naming project B
  before(() => {
    o = s.o;
    mine = s.client(s.keyA);
    theirs = s.client(s.keyB);
    orgWide = s.client(o.key);
    namingB = s.client(o.key, { 'SERVICE-PROJECT-ID': s.projectB });
  });

  it("another project's key finds none of them: 404 on every stored-object route, absent from lists, 400 previous_response_not_found; the org-wide key finds them", async () => {
    const chat = await mine.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'project a only' }], store: true, metadata: { p: 'a' } });
    const response = await mine.responses.create({ model: 'sim-chat', input: 'project a only' });
    const conv = await mine.conversations.create({ items: [{ type: 'message', role: 'user', content: 'project a only' }] });
    const [item] = (await mine.conversations.items.list(conv.id)).data as Array<{ id: string }>;
    const sent = env().sim.log.entries.length;

    for (const [c, who] of [[theirs, 'project b key'], [namingB, 'org-wide key naming project b']] as const) {
      const chatRefusals: Array<[string, () => Promise<unknown>]> = [
        ['chat retrieve', () => c.chat.completions.retrieve(chat.id)],
        ['chat update', () => c.chat.completions.update(chat.id, { metadata: { p: 'b' } })],
        ['chat messages', () => c.chat.completions.messages.list(chat.id)],
        ['chat delete', () => c.chat.completions.delete(chat.id)],
      ];
      for (const [what, p] of chatRefusals) expectRefused(await outcome(p()), 404, 'not_found', `${who}: ${what}`);
      const listed: string[] = [];
      for await (const x of c.chat.completions.list()) listed.push(x.id);
      expect(listed, `${who}: chat list`).to.not.include(chat.id);

      const responseRefusals: Array<[string, () => Promise<unknown>]> = [
        ['response retrieve', () => c.responses.retrieve(response.id)],
        ['response input items', () => c.responses.inputItems.list(response.id)],
        ['response cancel', () => c.responses.cancel(response.id)],
        ['response delete', () => c.responses.delete(response.id)],
      ];
      for (const [what, p] of responseRefusals) expectRefused(await outcome(p()), 404, 'response_not_found', `${who}: ${what}`);
      const followUp = await outcome(c.responses.create({ model: 'sim-chat', input: 'go on', previous_response_id: response.id }));
      expectRefused(followUp, 400, 'previous_response_not_found', `${who}: follow-up`);

      const convRefusals: Array<[string, () => Promise<unknown>]> = [
        ['conversation retrieve', () => c.conversations.retrieve(conv.id)],
        ['conversation update', () => c.conversations.update(conv.id, { metadata: { p: 'b' } })],
        ['conversation items', () => c.conversations.items.list(conv.id)],
        ['conversation add items', () => c.conversations.items.create(conv.id, { items: [{ type: 'message', role: 'user', content: 'intruding' }] })],
        ['conversation item', () => c.conversations.items.retrieve(item.id, { conversation_id: conv.id })],
        ['conversation item delete', () => c.conversations.items.delete(item.id, { conversation_id: conv.id })],
        ['conversation delete', () => c.conversations.delete(conv.id)],
        ['response in the conversation', () => c.responses.create({ model: 'sim-chat', input: 'go on', conversation: conv.id })],
      ];
      for (const [what, p] of convRefusals) expectRefused(await outcome(p()), 404, 'conversation_not_found', `${who}: ${what}`);
    }
    expect(env().sim.log.entries.length, 'no refused request reached the upstream').to.equal(sent);

    // untouched, and the org-wide key without a project finds them all
    for (const c of [mine, orgWide]) {
      expect(await c.chat.completions.retrieve(chat.id)).to.deep.include({ id: chat.id, metadata: { p: 'a' } });
      const listed: string[] = [];
      for await (const x of c.chat.completions.list({ metadata: { p: 'a' } })) listed.push(x.id);
      expect(listed).to.deep.equal([chat.id]);
      expect((await c.responses.retrieve(response.id)).id).to.equal(response.id);
      expect((await c.conversations.items.list(conv.id)).data.map((i) => (i as { id: string }).id)).to.deep.equal([item.id]);
    }
    const next = await mine.responses.create({ model: 'sim-chat', input: 'go on', previous_response_id: response.id });
    expect(next.status).to.equal('completed');
  });

  it("a project's key does not find what the org-wide key stored without a project; the path's project scopes like the header", async () => {
    const chat = await orgWide.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'no project' }], store: true });
    const response = await orgWide.responses.create({ model: 'sim-chat', input: 'no project' });
    expectRefused(await outcome(mine.chat.completions.retrieve(chat.id)), 404, 'not_found', 'chat');
    expectRefused(await outcome(mine.responses.retrieve(response.id)), 404, 'response_not_found', 'response');
    const viaPath = await call('GET', `/a/${o.key}/p/${o.project.id}/v1/responses/${response.id}`);
    expect(viaPath.status, viaPath.text).to.equal(404);
    const plain = await call('GET', `/v1/responses/${response.id}`, { headers: keyHeader(o.key) });
    expect(plain.status, plain.text).to.equal(200);
  });
});
