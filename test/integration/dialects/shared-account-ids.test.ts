import { expect } from 'chai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader, type Reply } from '../../helpers/http';
import { billedEvents } from '../../helpers/usage';
import { batchEnds, jsonl, parseJsonl, uploadBatchFile } from '../batches/helpers';
import { startBatchWorker } from '../../../workers/batch/main';

/**
 * Ids an upstream resolves in the account of the key it is called with (docs/security.md, "Ids an
 * upstream resolves"): on the platform's credential that account is every organization's, so a
 * request naming one is refused (400, or the vendor's 404 for an id it does not hold) in the dialect's envelope, nothing sent upstream or billed. A
 * caller paying with its own provider key (passthrough, chat completions) names its own account's.
 */
describe("ids an upstream resolves in the platform's shared account", () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  const sent = () => env().sim.log.entries;
  const text = (t: string) => ({ type: 'text', text: t });

  describe('chat completions (an OpenAI-compatible upstream gets the body as written)', () => {
    const chat = (messages: unknown[], extra: Record<string, unknown> = {}, headers: Record<string, string> = keyHeader(o.key)) =>
      call('POST', '/v1/chat/completions', { headers, json: { model: 'sim-chat', max_tokens: 10, messages, ...extra } });
    const fileMessage = (part: Record<string, unknown>) => [{ role: 'user', content: [text('summarise it'), part] }];

    const cases: Array<[string, unknown[], Record<string, unknown>, string, string]> = [
      ['a file part\'s file_id', fileMessage({ type: 'file', file: { file_id: 'file-abc123' } }), {}, 'messages[0].content[1].file.file_id', 'No such File object: file-abc123.'],
      ['an input_file part\'s file_id', fileMessage({ type: 'input_file', file_id: 'file-abc123' }), {}, 'messages[0].content[1].file_id', 'No such File object: file-abc123.'],
      ['an input_image part\'s file_id', fileMessage({ type: 'input_image', file_id: 'file-img' }), {}, 'messages[0].content[1].file_id', 'No such File object: file-img.'],
      ["Mistral's file chunk", fileMessage({ type: 'file', file_id: 'mistral-file' }), {}, 'messages[0].content[1].file_id', 'No such File object: mistral-file.'],
      [
        "an assistant turn's audio id",
        [{ role: 'user', content: 'hi' }, { role: 'assistant', audio: { id: 'audio_abc' } }, { role: 'user', content: 'again' }],
        {},
        'messages[1].audio.id',
        "Invalid 'messages[1].audio.id': no previous audio response 'audio_abc' was found",
      ],
      [
        "Azure's data_sources",
        [{ role: 'user', content: 'hi' }],
        { data_sources: [{ type: 'azure_search', parameters: { endpoint: 'https://x.search.windows.net', index_name: 'hr', authentication: { type: 'system_assigned_managed_identity' } } }] },
        'data_sources',
        "Invalid 'data_sources'",
      ],
    ];
    for (const [name, messages, extra, param, words] of cases) {
      it(`${name}: 400 invalid_request naming it, JSON and streamed, nothing sent or billed`, async () => {
        const before = await billedEvents(o.org.id);
        for (const stream of [false, true]) {
          const r = await chat(messages, stream ? { ...extra, stream } : extra);
          expect(r.status, `stream=${stream} ${r.text}`).to.equal(400);
          expect(r.body.error).to.include({ code: 'invalid_request', type: 'invalid_request_error', param });
          expect(r.body.error.message).to.include(words);
        }
        expect(sent(), 'nothing reached the upstream').to.have.length(0);
        expect(await billedEvents(o.org.id), 'nothing billed').to.equal(before);
      });
    }

    it('the official client gets the refusal as a BadRequestError; a null file_id, and a file given as data, are served', async () => {
      const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
      const err = await client.chat.completions
        .create({ model: 'sim-chat', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-other-org' } }] }] })
        .then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('messages[0].content[0].file.file_id');
      const data = await chat(fileMessage({ type: 'file', file: { filename: 'a.txt', file_data: 'data:text/plain;base64,aGk=', file_id: null } }));
      expect(data.status, data.text).to.equal(200);
      expect(sent()).to.have.length(1);
    });

    it("a caller paying with its own provider key (passthrough) names its own account's ids: they go upstream with its key", async () => {
      const own = { ...keyHeader(o.key), authorization: 'Bearer sk-own-account-key' };
      const messages = fileMessage({ type: 'file', file: { file_id: 'file-mine' } });
      const r = await chat(messages, {}, own);
      expect(r.status, r.text).to.equal(200);
      const upstream = sent();
      expect(upstream).to.have.length(1);
      expect(upstream[0].authorization).to.equal('Bearer sk-own-account-key');
      expect((upstream[0].body as { messages: unknown }).messages).to.deep.equal(messages);
    });

    it('a batch line naming a file id fails with the same 400 in the error file, unbilled; its other line is served', async function () {
      this.timeout(90_000);
      const worker = await startBatchWorker();
      try {
        const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
        const lines = [
          { custom_id: 'ok', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] } },
          { custom_id: 'file', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: fileMessage({ type: 'file', file: { file_id: 'file-abc123' } }) } },
        ];
        const before = await billedEvents(o.org.id);
        const b = await openai.batches.create({ input_file_id: await uploadBatchFile(openai, jsonl(lines)), endpoint: '/v1/chat/completions', completion_window: '24h' });
        const done = await batchEnds(openai, b.id);
        expect(done.request_counts).to.deep.equal({ total: 2, completed: 1, failed: 1 });
        const errs = parseJsonl<{ custom_id: string; response: { status_code: number; body: { error: { code: string; param: string } } } }>(await (await openai.files.content(done.error_file_id!)).text());
        expect(errs.map((e) => [e.custom_id, e.response.status_code, e.response.body.error.code, e.response.body.error.param])).to.deep.equal([['file', 400, 'invalid_request', 'messages[0].content[1].file.file_id']]);
        expect(sent().map((e) => JSON.stringify(e.body)).some((b) => b.includes('file-abc123')), 'the file id never went upstream').to.equal(false);
        expect(await billedEvents(o.org.id), 'only the served line billed').to.equal(before + 1);
      } finally {
        await worker.close();
      }
    });
  });

  describe('messages, native bypass (an Anthropic upstream gets the body as written)', () => {
    const post = (extra: Record<string, unknown>, messages: unknown[] = [{ role: 'user', content: 'hi' }]) =>
      call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01' }, json: { model: 'sim-claude', max_tokens: 20, messages, ...extra } });
    const doc = { type: 'document', source: { type: 'file', file_id: 'file_011other' } };
    const image = { type: 'image', source: { type: 'file', file_id: 'file_011img' } };

    const cases: Array<[string, Record<string, unknown>, unknown[] | undefined, string]> = [
      ["a document's file source", {}, [{ role: 'user', content: [doc, text('summarise it')] }], 'File `file_011other` not found.'],
      ["an image's file source", {}, [{ role: 'user', content: [image, text('describe it')] }], 'File `file_011img` not found.'],
      [
        "a file source inside a tool result's content",
        { tools: [{ name: 'fetch', input_schema: { type: 'object' } }] },
        [
          { role: 'user', content: 'fetch it' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch', input: { file_id: 'a tool argument, not a file source', type: 'file' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [doc] }] },
        ],
        'File `file_011other` not found.',
      ],
      ['a container_upload block', {}, [{ role: 'user', content: [{ type: 'container_upload', file_id: 'file_011up' }, text('run it')] }], 'File `file_011up` not found.'],
      ['a container id', { container: 'container_011other' }, undefined, "container: container 'container_011other' not found."],
      ['a container object with an id', { container: { id: 'container_011other', skills: null } }, undefined, "container: container 'container_011other' not found."],
      ['a custom skill', { container: { skills: [{ type: 'anthropic', skill_id: 'pdf' }, { type: 'custom', skill_id: 'skill_011theirs' }] } }, undefined, "container.skills.1: skill 'skill_011theirs' not found."],
      ['a continued thread', { thread: { type: 'continue', previous_message_id: 'msg_011theirs' } }, undefined, "thread.previous_message_id: message 'msg_011theirs' not found."],
    ];
    for (const [name, extra, messages, words] of cases) {
      // a thread is Anthropic's 404 thread_not_found (thread-not-found.ts), a file its 404 "File `<id>` not found.", the rest its 400
      const notFound = words.startsWith('thread.') ? 'thread_not_found' : words.startsWith('File `') ? 'file_not_found' : undefined;
      it(`${name}: ${notFound ? `404 not_found_error (${notFound})` : '400 invalid_request_error'} in Anthropic's envelope, JSON and streamed, nothing sent or billed`, async () => {
        const before = await billedEvents(o.org.id);
        for (const stream of [false, true]) {
          const r: Reply = await post(stream ? { ...extra, stream } : extra, messages);
          expect(r.status, `stream=${stream} ${r.text}`).to.equal(notFound ? 404 : 400);
          expect(r.body.error).to.include(notFound ? { type: 'not_found_error', code: notFound } : { type: 'invalid_request_error', code: 'invalid_request' });
          expect(r.body.error.message).to.include(words);
        }
        expect(sent(), 'nothing reached the upstream').to.have.length(0);
        expect(await billedEvents(o.org.id), 'nothing billed').to.equal(before);
      });
    }

    it('a file id whose key is written with an escape (file\\u005fid) is refused all the same, JSON and streamed (the raw bytes hold no `file_id`)', async () => {
      for (const stream of [false, true]) {
        const raw = `{"model":"sim-claude","max_tokens":20,"stream":${stream},"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file\\u005fid":"file_011esc"}},{"type":"text","text":"summarise it"}]}]}`;
        const r: Reply = await call('POST', '/v1/messages', { headers: { ...keyHeader(o.key), 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, raw });
        expect(r.status, `stream=${stream} ${r.text}`).to.equal(404);
        expect(r.body.error.message).to.include('File `file_011esc` not found.');
      }
      expect(sent(), 'nothing reached the upstream').to.have.length(0);
    });

    it("diagnostics' previous message id (an opted-in client sends its last answer's on every turn) is served, sent upstream as null", async () => {
      const before = await billedEvents(o.org.id);
      for (const stream of [false, true]) {
        const r: Reply = await post({ diagnostics: { previous_message_id: 'msg_011theirs' }, stream });
        expect(r.status, `stream=${stream} ${r.text}`).to.equal(200);
      }
      expect(sent()).to.have.length(2);
      for (const s of sent()) expect((s.body as { diagnostics?: unknown }).diagnostics).to.deep.equal({ previous_message_id: null });
      expect(await billedEvents(o.org.id), 'both billed').to.equal(before + 2);
    });

    it("the official client gets a file's refusal as a NotFoundError, a container's as a BadRequestError; Anthropic's own skills, a new thread and null ids are sent as given", async () => {
      const client = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
      const err = await client.beta.messages
        .create({ model: 'sim-claude', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_011x' } }] }], betas: ['files-api-2025-04-14'] })
        .then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(Anthropic.NotFoundError);
      expect((err as InstanceType<typeof Anthropic.NotFoundError>).status).to.equal(404);
      expect((err as Error).message).to.include('File `file_011x` not found.');
      const container = await client.beta.messages.create({ model: 'sim-claude', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], container: 'container_011x' }).then(() => undefined, (e: unknown) => e);
      expect(container).to.be.instanceOf(Anthropic.BadRequestError);
      const allowed = { container: { id: null, skills: [{ type: 'anthropic', skill_id: 'pdf', version: 'latest' }] }, thread: { type: 'create' }, diagnostics: { previous_message_id: null } };
      const r = await post(allowed);
      expect(r.status, r.text).to.equal(200);
      expect(sent()).to.have.length(1);
      expect(sent()[0].body).to.deep.include(allowed);
    });
  });
});
