import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { expectCleanAndUnmetered } from '../../helpers/multipart';
import { Model, Provider, Wallet } from '../../../shared/db/models';
import { bumpEpoch } from '../../../shared/cache/epoch';
import { credit } from '../../../shared/billing/wallet';

const speech = makeWav(SPEECH_LIKE);
const PATH = '/v1/audio/transcriptions';

/**
 * What a caller of the official openai client meets when the upstream refuses what the gateway (not
 * the caller) asked of it: OpenAI's gpt-4o-transcribe family answers `response_format=verbose_json`
 * (the format the worker always asks for) with 400 `unsupported_value`, `param: "response_format"`
 * (the simulator's `sim-4o-transcribe-1` answers so). That is the catalog's configuration: the caller's
 * audio is fine, so it is 502 audio_backend_unavailable, never 400 "could not read the file", and
 * nothing is held, charged or metered.
 */
describe('audio transcription: upstream refusals of the gateway\'s own fields (official openai client)', () => {
  let o: TestOrg;
  let client: OpenAI;
  before(async () => {
    o = await buildOrg(env().redis, { policies: { audio_billing: 'metered' } });
    await credit(o.org.id, 1_000_000);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
    const sim = await Provider.findOne({ where: { name: 'simulator' } });
    await Model.create({
      providerId: sim!.id,
      publicId: 'test-4o-transcribe',
      upstreamName: 'sim-4o-transcribe-1',
      displayName: 'JSON-only transcription',
      capabilities: { transcription: true },
      contextWindow: null,
      maxOutputTokens: null,
      config: { audio_config: { max_duration_seconds: 600, supports_word_timestamps: false } },
      prices: { audio_second: 100 },
    });
    await bumpEpoch(env().redis);
  });
  after(async () => {
    await Model.destroy({ where: { publicId: 'test-4o-transcribe' } });
    await bumpEpoch(env().redis);
  });
  beforeEach(resetSim);

  const wallet = async () => {
    const w = (await Wallet.findOne({ where: { orgId: o.org.id } }))!;
    return { balance: Number(w.balanceMicros), reserved: Number(w.reservedMicros) };
  };

  it('an upstream that does not answer verbose_json: 502 audio_backend_unavailable, not the caller\'s 400, nothing billed', async () => {
    for (const response_format of ['json', 'text'] as const) {
      const err = await client.audio.transcriptions
        .create({ file: await toFile(speech, 'meeting.wav', { type: 'audio/wav' }), model: 'test-4o-transcribe', response_format })
        .then(() => undefined, (e: unknown) => e);
      expect(err, response_format).to.be.instanceOf(OpenAI.InternalServerError);
      const e = err as InstanceType<typeof OpenAI.InternalServerError>;
      expect(e.status).to.equal(502);
      expect(e.code).to.equal('audio_backend_unavailable');
      expect(e.param).to.equal(null);
      expect(e.type).to.equal('server_error');
      expect(e.message, 'the backend\'s words are never passed on').to.not.include('compatible');
      expect(e.headers.get('retry-after')).to.be.a('string');
      // it did reach the upstream, which refused the gateway's response_format
      const up = env().sim.log.entries.filter((x) => x.path === PATH);
      expect(up).to.have.length(1);
      expect((up[0].body as { response_format: string }).response_format).to.equal('verbose_json');
      await expectCleanAndUnmetered(e.headers.get('x-service-request-id')!);
      expect(await wallet(), 'the hold is released, nothing charged').to.deep.equal({ balance: 1_000_000, reserved: 0 });
      resetSim();
    }
  });

  it('audio the upstream cannot read is still the caller\'s 400 invalid_request (its refusal names the file)', async () => {
    const err = await client.audio.transcriptions
      .create({ file: await toFile(Buffer.from('ID3 not really an mp3'), 'song.mp3', { type: 'audio/mpeg' }), model: 'sim-whisper' })
      .then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.code).to.equal('invalid_request');
    expect(e.param).to.equal(null);
    await expectCleanAndUnmetered(e.headers.get('x-service-request-id')!);
    expect(await wallet()).to.deep.equal({ balance: 1_000_000, reserved: 0 });
  });
});
