import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { useGeminiModels } from '../../helpers/gemini-model';

const lookup = { name: 'lookup', input_schema: { type: 'object' as const, properties: { q: { type: 'string' } } } };

/**
 * A translating adapter (Gemini, Bedrock Converse) refuses a field it cannot express by its chat
 * name; a messages client never sent that name. `tool_choice.disable_parallel_tool_use` became
 * `parallel_tool_calls: false` and was refused as "`parallel_tool_calls` cannot be switched off on
 * this model."; the messages dialect now names the field the client sent (the chat dialect keeps its own).
 */
describe('messages dialect: a translated upstream’s refusal names the messages field (official Anthropic client)', () => {
  let o: TestOrg;
  let anthropic: Anthropic;
  useGeminiModels({ bedrock: true });
  before(async () => {
    o = await buildOrg(env().redis);
    anthropic = new Anthropic({ apiKey: o.key, baseURL: env().gw.url, maxRetries: 0 });
  });
  beforeEach(resetSim);

  for (const model of ['test-gemini', 'sim-bedrock-nova']) {
    it(`${model}: disable_parallel_tool_use is refused naming tool_choice.disable_parallel_tool_use, JSON and streamed`, async () => {
      const params = { model, max_tokens: 64, tools: [lookup], tool_choice: { type: 'auto' as const, disable_parallel_tool_use: true }, messages: [{ role: 'user' as const, content: 'use the tool' }] };
      for (const call of [() => anthropic.messages.create(params), () => anthropic.messages.stream(params).finalMessage()]) {
        const err = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(Anthropic.BadRequestError);
        const e = err as InstanceType<typeof Anthropic.BadRequestError>;
        expect(e.type).to.equal('invalid_request_error');
        expect((e.error as { error: { message: string } }).error.message).to.match(/^`tool_choice\.disable_parallel_tool_use` /);
        expect((e.error as { error: { message: string } }).error.message).to.not.include('parallel_tool_calls');
      }
      expect(env().sim.log.entries).to.have.length(0);
      // the chat dialect's own field keeps its name there
      const openai = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
      const chat = await openai.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'use the tool' }], tools: [{ type: 'function', function: { name: 'lookup', parameters: lookup.input_schema } }], parallel_tool_calls: false })
        .catch((x: unknown) => x as InstanceType<typeof OpenAI.BadRequestError>);
      expect(chat).to.be.instanceOf(OpenAI.BadRequestError);
      expect((chat as InstanceType<typeof OpenAI.BadRequestError>).message).to.include('`parallel_tool_calls`');
    });
  }
});
