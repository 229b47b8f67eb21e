import { expect } from 'chai';
import OpenAI from 'openai';
import { env } from '../../helpers/harness';
import { openaiOrg } from '../../helpers/openai-org';
import { call, keyHeader } from '../../helpers/http';
import { expectOpenAI } from '../../helpers/conformance';
import { outcome } from '../../helpers/responses-background';

/**
 * `safety_identifier` on chat completions and responses: at most 128 characters, as openai-node
 * 7.60.0 documents it (the vendored document of 2026-08-21 still says 64; docs/dialects.md). One
 * more is 400 in OpenAI's error shape naming the field, before anything is sent.
 */
describe('safety_identifier: its length limit on chat completions and responses', () => {
  const s = openaiOrg();
  const longest = 's'.repeat(128);
  const tooLong = 's'.repeat(129);

  it('takes 128 characters (chat forwards it as sent, responses echo it) and refuses 129, or a value that is not a string: 400 naming safety_identifier in OpenAI\'s codes (string_above_max_length, invalid_type) (the SDK raises BadRequestError), nothing sent', async () => {
    const chat = await s.c.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], safety_identifier: longest });
    expect(chat.choices[0].message.content).to.be.a('string');
    expect((env().sim.log.entries.at(-1)!.body as { safety_identifier?: string }).safety_identifier).to.equal(longest);
    const response = await s.c.responses.create({ model: 'sim-chat', input: 'hello', safety_identifier: longest });
    expect(response.safety_identifier).to.equal(longest);
    const sent = env().sim.log.entries.length;

    const refusals = [
      s.c.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], safety_identifier: tooLong }),
      s.c.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], stream: true, safety_identifier: tooLong }),
      s.c.responses.create({ model: 'sim-chat', input: 'hello', safety_identifier: tooLong }),
    ];
    // both dialects answer OpenAI's string_above_max_length (chat-openai-codes.test.ts, responses-openai-refusals.test.ts)
    const codes = ['string_above_max_length', 'string_above_max_length', 'string_above_max_length'];
    for (const [i, err] of (await Promise.all(refusals.map(outcome))).entries()) {
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect(err as InstanceType<typeof OpenAI.BadRequestError>).to.deep.include({ status: 400, code: codes[i], param: 'safety_identifier' });
    }
    for (const [path, json] of [
      ['/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], safety_identifier: tooLong }],
      ['/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], safety_identifier: 42 }],
      ['/v1/responses', { model: 'sim-chat', input: 'hello', safety_identifier: tooLong }],
    ] as const) {
      const r = await call('POST', path, { headers: keyHeader(s.o.key), json });
      expect(r.status, r.text).to.equal(400);
      expect(r.body.error).to.include({ type: 'invalid_request_error', code: json.safety_identifier === 42 ? 'invalid_type' : 'string_above_max_length', param: 'safety_identifier' });
      expectOpenAI('ErrorResponse', r.body);
    }
    expect(env().sim.log.entries, 'nothing sent').to.have.length(sent);
  });
});
