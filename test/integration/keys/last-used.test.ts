import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { ApiKey } from '../../../shared/db/models';
import { keys } from '../../../shared/redis/keys';
import { waitFor } from '../../helpers/wait';

const chat = (key: string) => call('POST', '/v1/chat/completions', { headers: keyHeader(key), json: { model: 'sim-chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } });

describe("a key's last use: one note per key per minute, not one Redis command per request", () => {
  beforeEach(resetSim);

  it('writes last_used_at on first use, and a pod that noted the key sends no other note for it within the minute', async () => {
    const o = await buildOrg(env().redis);
    const mark = keys.limits(o.org.id, `used:${o.keyId}`);
    expect((await chat(o.key)).status).to.equal(200);
    expect(await waitFor(async () => (await ApiKey.findByPk(o.keyId))!.lastUsedAt !== null), 'last used is written').to.equal(true);
    expect(await env().redis.exists(mark), 'the minute mark is set').to.equal(1);
    // Without the mark, a SET NX from the pod would win again and write the column again.
    await env().redis.del(mark);
    await ApiKey.update({ lastUsedAt: null }, { where: { id: o.keyId } });
    for (let i = 0; i < 3; i++) expect((await chat(o.key)).status).to.equal(200);
    expect(await env().redis.exists(mark), 'no note sent within the minute').to.equal(0);
    expect((await ApiKey.findByPk(o.keyId))!.lastUsedAt, 'not written again within the minute').to.equal(null);
  });
});
