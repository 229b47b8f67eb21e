import { expect } from 'chai';
import OpenAI from 'openai';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { outcome } from '../../helpers/responses-background';
import { env } from '../../helpers/harness';

const NOT_FOUND = 'The model `gpt-nope` does not exist or you do not have access to it.';

/**
 * An unknown model is answered in OpenAI's words ("The model `x` does not exist or you do not have
 * access to it.", code model_not_found, its API's answer as clients quote it), on chat completions,
 * legacy completions, embeddings and the models endpoint; the gateway's own sentence ("The model 'x'
 * does not exist.") differed from it.
 */
describe("an unknown model in OpenAI's words", function () {
  this.timeout(30_000);
  const s = openaiOrg();

  it('chat (JSON and streamed), legacy completions, embeddings and GET /v1/models/{id} answer 404 model_not_found in its sentence; nothing sent', async () => {
    const h = { headers: keyHeader(s.o.key) };
    const replies = [
      await call('POST', '/v1/chat/completions', { ...h, json: { model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }] } }),
      await call('POST', '/v1/chat/completions', { ...h, json: { model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }], stream: true } }),
      await call('POST', '/v1/completions', { ...h, json: { model: 'gpt-nope', prompt: 'hi' } }),
      await call('POST', '/v1/embeddings', { ...h, json: { model: 'gpt-nope', input: 'hi' } }),
      await call('GET', '/v1/models/gpt-nope', h),
    ];
    for (const r of replies) {
      expect(r.status, r.text).to.equal(404);
      expect(r.body.error, r.text).to.include({ code: 'model_not_found', type: 'invalid_request_error', message: NOT_FOUND });
    }
    const err = await outcome(s.c.chat.completions.create({ model: 'gpt-nope', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).message).to.equal(`404 ${NOT_FOUND}`);
    expect(env().sim.log.entries).to.have.length(0);
  });
});
