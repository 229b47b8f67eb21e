import { expect } from 'chai';
import pino from 'pino';
import OpenAI, { toFile } from 'openai';
import { QueryTypes } from 'sequelize';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { multipartBody, postAudio, transcriptionParts, type Part } from '../../helpers/multipart';
import { logger } from '../../../shared/logger';
import { db } from '../../../shared/db/sequelize';
import { UsageEvent } from '../../../shared/db/models';
import { config } from '../../../shared/config/env';
import { usageSettled } from '../../helpers/usage';

const PROMPT = 'Confidential: project Zebra-7731 merger with Okapi Holdings';
const FILENAME = 'board-meeting-secret-4410.wav';
const FILE_STEM = 'board-meeting-secret-4410';

/** Everything the shared logger writes while `fn` runs, at the most verbose level. */
async function captureLogs(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const l = logger as unknown as Record<symbol, unknown>;
  const stream = l[pino.symbols.streamSym];
  const level = logger.level;
  l[pino.symbols.streamSym] = { write: (s: string) => void lines.push(s) };
  logger.level = 'trace';
  try {
    await fn();
  } finally {
    l[pino.symbols.streamSym] = stream;
    logger.level = level;
  }
  return lines;
}

/** Every value under this run's Redis prefix (strings, hashes, lists, sets, sorted sets, streams). */
async function redisDump(): Promise<string[]> {
  const r = env().redis;
  const prefix = config().redisPrefix;
  const out: string[] = [];
  for (const pattern of [`${prefix}*`, `{${prefix}}*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      for (const k of keys) {
        const type = await r.type(k);
        if (type === 'string') out.push(`${k} ${await r.getBuffer(k).then((b) => b?.toString('latin1'))}`);
        else if (type === 'hash') out.push(`${k} ${JSON.stringify(await r.hgetall(k))}`);
        else if (type === 'list') out.push(`${k} ${JSON.stringify(await r.lrange(k, 0, -1))}`);
        else if (type === 'set') out.push(`${k} ${JSON.stringify(await r.smembers(k))}`);
        else if (type === 'zset') out.push(`${k} ${JSON.stringify(await r.zrange(k, '0', '-1'))}`);
        else if (type === 'stream') out.push(`${k} ${JSON.stringify(await r.xrange(k, '-', '+', 'COUNT', '100000'))}`);
      }
    } while (cursor !== '0');
  }
  return out;
}

/** Rows of every table that contain `needle` anywhere. */
async function rowsContaining(needle: string): Promise<Array<{ table: string; n: number }>> {
  const tables = await db().query<{ name: string }>(`SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`, { type: QueryTypes.SELECT });
  const hits: Array<{ table: string; n: number }> = [];
  expect(tables.map((t) => t.name)).to.include('usage_events');
  for (const { name } of tables) {
    const [row] = await db().query<{ n: string }>(`SELECT count(*) AS n FROM "${name}" t WHERE t::text ILIKE '%' || $1 || '%'`, { bind: [needle], type: QueryTypes.SELECT });
    if (Number(row.n) > 0) hits.push({ table: name, n: Number(row.n) });
  }
  return hits;
}

describe('audio transcription: privacy of prompt, filename and transcript', () => {
  let o: TestOrg;
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);

  it('never puts them in a log line, a database row, a Redis value or an error message', async function () {
    this.timeout(30_000);
    const wav = makeWav(SPEECH_LIKE);
    const transcripts: string[] = [];
    const errorBodies: string[] = [];
    const meteredIds: string[] = [];
    const secretParts = (extra: Part[] = [], model?: string): Part[] => {
      const parts = transcriptionParts(wav, [{ name: 'prompt', value: PROMPT }, ...extra], model);
      parts[0] = { ...parts[0], filename: FILENAME };
      return parts;
    };

    const lines = await captureLogs(async () => {
      const client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
      const json = await client.audio.transcriptions.create({ file: await toFile(wav, FILENAME), model: 'sim-whisper', prompt: PROMPT }).withResponse();
      transcripts.push(json.data.text);
      meteredIds.push(json.response.headers.get('x-service-request-id')!);
      const verbose = await client.audio.transcriptions.create({
        file: await toFile(wav, FILENAME),
        model: 'sim-whisper',
        prompt: PROMPT,
        response_format: 'verbose_json',
        timestamp_granularities: ['word'],
      });
      transcripts.push(verbose.text, ...verbose.segments!.map((s) => s.text.trim()).filter((t) => t.includes(' ')));
      expect((env().sim.log.entries.at(-1)!.body as { prompt: string }).prompt, 'the prompt did reach the upstream').to.equal(PROMPT);

      // Failures on every side: backend shedding and failing, limits, bad parameters, wrong model.
      env().sim.knobs.set('sim-whisper-1', { status: 429, retryAfter: 0 });
      errorBodies.push((await postAudio('/v1/audio/transcriptions', keyHeader(o.key), multipartBody(secretParts()))).text);
      env().sim.knobs.set('sim-whisper-1', { status: 500 });
      errorBodies.push((await postAudio('/v1/audio/transcriptions', keyHeader(o.key), multipartBody(secretParts()))).text);
      env().sim.knobs.set('sim-whisper-1', { malformed: true });
      errorBodies.push((await postAudio('/v1/audio/transcriptions', keyHeader(o.key), multipartBody(secretParts()))).text);
      env().sim.knobs.reset();
      for (const parts of [
        secretParts([{ name: 'temperature', value: PROMPT }]),
        secretParts([{ name: 'language', value: FILE_STEM }]),
        secretParts([{ name: 'response_format', value: PROMPT }]),
        secretParts([], FILE_STEM),
        secretParts([{ name: 'prompt', value: PROMPT }]),
        secretParts([{ name: 'timestamp_granularities[]', value: PROMPT }]),
      ]) {
        errorBodies.push((await postAudio('/v1/audio/transcriptions', keyHeader(o.key), multipartBody(parts))).text);
      }
      const long = multipartBody(secretParts([{ name: 'prompt', value: `${PROMPT} ${'x'.repeat(5000)}` }]));
      errorBodies.push((await postAudio('/v1/audio/transcriptions', keyHeader(o.key), long)).text);
    });

    const secrets = [PROMPT, 'Zebra-7731', FILENAME, FILE_STEM, ...transcripts];
    expect(transcripts[0].split(' ').length).to.be.at.least(3);
    expect(errorBodies).to.have.length(10);
    for (const b of errorBodies) expect(JSON.parse(b).error.code, b).to.be.a('string');

    // The capture works: the audio path did log (durations, ids), just nothing private.
    expect(lines.some((l) => l.includes('transcription done')), 'audio log lines were captured').to.equal(true);
    const dump = await redisDump();
    expect(dump.some((v) => v.includes(meteredIds[0]) && v.includes('sealed')), 'the finished job is in Redis, sealed').to.equal(true);
    await usageSettled();
    expect(await UsageEvent.count({ where: { requestId: meteredIds } })).to.equal(1);

    for (const s of secrets) {
      for (const l of lines) expect(l, 'log line').to.not.include(s);
      for (const b of errorBodies) expect(b, 'error message').to.not.include(s);
      for (const v of dump) expect(v.includes(s), `Redis value leaks '${s}': ${v.slice(0, 200)}`).to.equal(false);
      expect(await rowsContaining(s), `rows containing '${s}'`).to.deep.equal([]);
    }
  });
});
