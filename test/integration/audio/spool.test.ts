import fs from 'fs';
import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { keyHeader } from '../../helpers/http';
import { makeWav, SPEECH_LIKE } from '../../helpers/wav';
import { expectCleanAndUnmetered, multipartBody, postAudio, transcriptionParts } from '../../helpers/multipart';
import { expectErrorEnvelope } from '../../helpers/errors';
import { config } from '../../../shared/config/env';

const PATH = '/v1/audio/transcriptions';
const speech = makeWav(SPEECH_LIKE);

/**
 * The spool directory is the gateway's, not the client's: one that disappears while the pod runs
 * (a temporary-files cleaner, an operator) is made again at the next upload, and one that cannot be
 * written is a 500 of the gateway's, never the client's "malformed body" 400.
 */
describe('audio transcription: the spool directory', () => {
  let o: TestOrg;
  const dir = () => config().audioSpoolDir;
  const send = () => postAudio(PATH, keyHeader(o.key), multipartBody(transcriptionParts(speech)));
  before(async () => {
    o = await buildOrg(env().redis);
  });
  beforeEach(resetSim);
  afterEach(() => {
    if (fs.existsSync(dir()) && !fs.statSync(dir()).isDirectory()) fs.rmSync(dir());
    fs.mkdirSync(dir(), { recursive: true, mode: 0o700 });
  });

  it('removed while the pod runs: the next upload makes it again and is transcribed', async () => {
    expect((await send()).status, 'before').to.equal(200);
    fs.rmSync(dir(), { recursive: true, force: true });
    const r = await send();
    expect(r.status, r.text).to.equal(200);
    expect(r.body.text).to.be.a('string').and.not.equal('');
    expect(fs.statSync(dir()).isDirectory(), 'made again').to.equal(true);
    expect((fs.statSync(dir()).mode & 0o777).toString(8), 'owner only').to.equal('700');
  });

  it('unusable (a file where the directory should be): 500 internal_error, no path or stack in the answer, nothing sent upstream or billed', async () => {
    fs.rmSync(dir(), { recursive: true, force: true });
    fs.writeFileSync(dir(), 'not a directory');
    const r = await send();
    expect(r.status, r.text).to.equal(500);
    expectErrorEnvelope(r.text, 'internal_error');
    expect(r.text, 'the spool path').to.not.include(dir());
    expect(env().sim.log.entries.filter((e) => e.path === PATH), 'nothing upstream').to.have.length(0);
    fs.rmSync(dir());
    await expectCleanAndUnmetered(r.requestId);
    expect((await send()).status, 'served again once the directory can be made').to.equal(200);
  });
});
