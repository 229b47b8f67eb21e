import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env } from '../../helpers/harness';
import { Project } from '../../../shared/db/models';
import { createApiKey } from '../../../shared/tenancy/ops';
import { batchEnds, batchSuite, chatLines, jsonl, uploadBatchFile } from './helpers';

/** What the SDK's call rejects with, or 'answered'. */
const outcome = (p: Promise<unknown>) => p.then(() => 'answered' as const, (e: unknown) => e);

/**
 * Batch files and batches (OpenAI's and Anthropic's) belong to the project of the request that made
 * them, as stored completions and responses do (shared/tenancy/store-scope.ts): another project's key
 * (or the org-wide key naming another project) could list them, read a batch's output file (every
 * line's prompt answer), run a batch over another project's input file, cancel and delete them.
 */
describe('batches and files: scoped to the request’s project', () => {
  const s = batchSuite();

  it("another project's key finds none of project A's files or batches (404, absent from lists); the org-wide key without a project finds them", async () => {
    const other = await Project.create({ orgId: s.o.org.id, name: 'Other', slug: `other-${Date.now()}` });
    const aKey = await createApiKey(env().redis, { orgId: s.o.org.id, projectId: s.o.project.id, name: 'project a' });
    const bKey = await createApiKey(env().redis, { orgId: s.o.org.id, projectId: other.id, name: 'project b' });
    const client = (key: string, headers?: Record<string, string>) => new OpenAI({ apiKey: key, baseURL: `${env().gw.url}/v1`, maxRetries: 0, defaultHeaders: headers });
    const mine = client(aKey.key);
    const mineAnthropic = new Anthropic({ apiKey: aKey.key, baseURL: env().gw.url, maxRetries: 0 });
    const input = await uploadBatchFile(mine, jsonl(chatLines(2, 'secret-a')));
    const batch = await mine.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await batchEnds(mine, batch.id);
    expect(done.status).to.equal('completed');
    const message = await mineAnthropic.messages.batches.create({ requests: [{ custom_id: 'a', params: { model: 'sim-claude', max_tokens: 20, messages: [{ role: 'user', content: 'secret-a' }] } }] });

    for (const [key, headers, who] of [[bKey.key, undefined, 'project b key'], [s.o.key, { 'SERVICE-PROJECT-ID': other.id }, 'org-wide key naming project b']] as const) {
      const c = client(key, headers);
      const anthropic = new Anthropic({ apiKey: key, baseURL: env().gw.url, maxRetries: 0, defaultHeaders: headers });
      const refusals: Array<[string, () => Promise<unknown>]> = [
        ['file retrieve', () => c.files.retrieve(input)],
        ['file content', () => c.files.content(done.output_file_id!)],
        ['file delete', () => c.files.delete(input)],
        ['batch retrieve', () => c.batches.retrieve(batch.id)],
        ['batch cancel', () => c.batches.cancel(batch.id)],
        ['message batch retrieve', () => anthropic.messages.batches.retrieve(message.id)],
        ['message batch results', () => anthropic.messages.batches.results(message.id)],
        ['message batch cancel', () => anthropic.messages.batches.cancel(message.id)],
        ['message batch delete', () => anthropic.messages.batches.delete(message.id)],
      ];
      for (const [what, p] of refusals) expect((await outcome(p())) as { status?: number }, `${who}: ${what}`).to.have.property('status', 404);
      const created = await outcome(c.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' }));
      expect(created, `${who}: a batch over project a's input file`).to.not.equal('answered');
      const files: string[] = [];
      for await (const f of c.files.list()) files.push(f.id);
      expect(files, `${who}: file list`).to.not.include.members([input, done.output_file_id]);
      const batches: string[] = [];
      for await (const b of c.batches.list()) batches.push(b.id);
      expect(batches, `${who}: batch list`).to.not.include(batch.id);
      const messageBatches: string[] = [];
      for await (const b of anthropic.messages.batches.list()) messageBatches.push(b.id);
      expect(messageBatches, `${who}: message batch list`).to.not.include(message.id);
      // its own upload is its own
      const own = await c.files.create({ file: await toFile(Buffer.from(jsonl(chatLines(1, 'b'))), 'b.jsonl'), purpose: 'batch' });
      expect((await c.files.retrieve(own.id)).id).to.equal(own.id);
    }

    const orgWide = client(s.o.key);
    expect((await orgWide.files.retrieve(input)).id, 'the org-wide key without a project').to.equal(input);
    expect(await (await orgWide.files.content(done.output_file_id!)).text()).to.include('secret-a');
    expect((await orgWide.batches.retrieve(batch.id)).id).to.equal(batch.id);
    expect((await new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 }).messages.batches.retrieve(message.id)).id).to.equal(message.id);
  });
});
