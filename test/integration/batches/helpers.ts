import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { QueryTypes } from 'sequelize';
import { db } from '../../../shared/db/sequelize';
import { startBatchWorker } from '../../../workers/batch/main';
import { waitFor } from '../../helpers/wait';
import { expect } from 'chai';
import { usageSettled } from '../../helpers/usage';
import { CLOCK_TASKS } from '../../../workers/cron/clock';
import { imageStorage } from '../../../shared/storage';

export type BatchWorker = Awaited<ReturnType<typeof startBatchWorker>>;

/** A JSONL input file of `{custom_id, method, url, body}` lines. */
export function jsonl(lines: unknown[]): string {
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

export async function uploadBatchFile(openai: OpenAI, text: string): Promise<string> {
  const f = await openai.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
  return f.id;
}

/** Polls until the batch reaches one of `statuses` (the runner's pace: BATCH_POLL_MS and the lanes). */
export async function batchEnds(openai: OpenAI, id: string, statuses = ['completed', 'failed', 'expired', 'cancelled'], ms = 60_000): Promise<OpenAI.Batches.Batch> {
  const b = await waitFor(async () => {
    const b = await openai.batches.retrieve(id);
    return statuses.includes(b.status) ? b : undefined;
  }, ms, 50);
  if (!b) throw new Error(`batch ${id} did not reach ${statuses.join('/')} within ${ms} ms: ${JSON.stringify(await openai.batches.retrieve(id))}`);
  return b;
}

/** The usage events of a batch's lines (request ids `batch_req_<batch hex>_…`). */
export async function batchUsage(batchId: string): Promise<{ request_id: string; input_tokens: number; output_tokens: number; units: Record<string, number>; lane: string; model: string; project_id: string | null; api_key_id: string }[]> {
  return db().query(`SELECT request_id, input_tokens, output_tokens, units, lane, model, project_id, api_key_id FROM usage_events WHERE request_id LIKE :p ORDER BY request_id`, {
    type: QueryTypes.SELECT,
    replacements: { p: `batch_req_${batchId.replace(/^[a-z]+_/, '')}_%` },
  });
}

export function parseJsonl<T = Record<string, unknown>>(text: string): T[] {
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

/**
 * BATCH_POLL_MS for a runner of a test that asserts outcomes, not the runner's pace: a batch waits a
 * poll for each of its steps (validated, first lines claimed, finalized; 500 ms each by default).
 */
export const QUICK_POLL_MS = 50;

/** What `batchSuite` sets up: filled in by its `before` hook. */
export interface BatchSuite {
  o: TestOrg;
  openai: OpenAI;
  anthropic: Anthropic;
  worker: BatchWorker;
}

/**
 * Registers a describe block's hooks: a fresh org, the official OpenAI and Anthropic clients on the
 * test gateway with its key, and a batch runner (`runner`: its BATCH_* settings to override, closed
 * after); the simulator is reset before each test.
 */
export function batchSuite(runner: Parameters<typeof startBatchWorker>[0] = {}): BatchSuite {
  const s = {} as BatchSuite;
  before(async () => {
    s.o = await buildOrg(env().redis);
    s.openai = new OpenAI({ apiKey: s.o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    s.anthropic = new Anthropic({ apiKey: s.o.key, baseURL: env().gw.url, maxRetries: 0 });
    s.worker = await startBatchWorker(runner);
  });
  after(async () => s.worker?.close());
  beforeEach(resetSim);
  return s;
}

/** `n` chat lines `<tag>-<i>` on sim-chat. */
export const chatLines = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ custom_id: `${tag}-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat', messages: [{ role: 'user', content: `${tag} ${i}` }] } }));

/** Every line billed exactly once: one usage event per line index, whatever its attempt. */
export async function billedOncePerLine(batchId: string, n: number, delivered: string[]): Promise<string[]> {
  await usageSettled();
  const usage = await batchUsage(batchId);
  const idx = usage.map((u) => Number(/_(\d+)(?:_\d+)?$/.exec(u.request_id)![1]));
  expect(idx.sort((a, b) => a - b)).to.deep.equal(Array.from({ length: n }, (_, i) => i));
  expect(usage.map((u) => u.request_id).sort()).to.deep.equal([...delivered].sort()); // the delivered answer is the billed one
  return usage.map((u) => u.request_id);
}

export async function outputOf(openai: OpenAI, b: OpenAI.Batches.Batch) {
  return parseJsonl<{ id: string; custom_id: string; response: { status_code: number } }>(await (await openai.files.content(b.output_file_id!)).text());
}

/**
 * Runs the clock's batch file sweep, then checks that `gone` lost its row and bytes (GET is a 404)
 * and that `kept` still has its bytes.
 */
export async function expectSwept(openai: OpenAI, gone: string, kept: string): Promise<void> {
  await CLOCK_TASKS.find((t) => t.name === 'expire-batch-files')!.run(env().redis);
  expect(await imageStorage().get(`${gone}.jsonl`)).to.equal(undefined);
  expect(await imageStorage().get(`${kept}.jsonl`)).to.be.instanceOf(Buffer);
  try {
    await openai.files.retrieve(gone);
    expect.fail('expired');
  } catch (err) {
    expect((err as { status: number }).status).to.equal(404);
  }
}
