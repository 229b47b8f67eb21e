import { expect } from 'chai';
import OpenAI from 'openai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { UsageEvent } from '../../../shared/db/models';
import { usageSettled } from '../../helpers/usage';
import { useGeminiModels } from '../../helpers/gemini-model';

type Params = OpenAI.ChatCompletionCreateParamsNonStreaming;
const user = [{ role: 'user' as const, content: 'x' }];

/**
 * The Gemini and Bedrock adapters refuse what the Anthropic one refuses and they cannot honour
 * either (they dropped it): 400 `unsupported_parameter` naming the field, through the official SDK,
 * nothing sent upstream and nothing billed. What they can honour is sent.
 */
describe('Gemini and Bedrock adapters: the refusals they share with the Anthropic adapter', function () {
  this.timeout(30_000);
  let o: TestOrg;
  let client: OpenAI;
  let billed: number;
  useGeminiModels({ bedrock: true });
  before(async () => {
    o = await buildOrg(env().redis);
    client = new OpenAI({ apiKey: o.key, baseURL: `${env().gw.url}/v1`, maxRetries: 0 });
  });
  beforeEach(async () => {
    resetSim();
    await usageSettled();
    billed = await UsageEvent.count({ where: { orgId: o.org.id } });
  });

  async function refused(model: string, extra: Record<string, unknown>, param: string): Promise<void> {
    const err = await client.chat.completions.create({ model, messages: user, ...extra } as Params).catch((e: unknown) => e);
    expect(err, `${model} ${param}: ${String(err)}`).to.be.instanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.code, `${model} ${param}`).to.equal('unsupported_parameter');
    expect(e.param, model).to.equal(param);
    expect(e.message).to.include(`\`${param}\``);
    expect(env().sim.log.entries, `${model} ${param}: nothing sent`).to.have.length(0);
    await usageSettled();
    expect(await UsageEvent.count({ where: { orgId: o.org.id } }), 'nothing billed').to.equal(billed);
  }

  const both: Array<[string, Record<string, unknown>, string]> = [
    ['moderation', { moderation: { model: 'omni-moderation-latest' } }, 'moderation'],
    ['a verbosity other than medium', { verbosity: 'low' }, 'verbosity'],
    ['an empty stop sequence', { stop: ['END', ''] }, 'stop'],
  ];
  const bedrockToo: Array<[string, Record<string, unknown>, string]> = [
    ['web_search_options', { web_search_options: {} }, 'web_search_options'],
    ['the legacy functions', { functions: [{ name: 'f', parameters: { type: 'object', properties: {} } }] }, 'functions'],
    ['the legacy function_call', { function_call: 'auto' }, 'function_call'],
    ['a response_format of an unknown type', { response_format: { type: 'grammar', grammar: 'x' } }, 'response_format'],
  ];
  for (const [what, extra, param] of both) {
    it(`Gemini refuses ${what} naming ${param}`, () => refused('test-gemini', extra, param));
  }
  for (const [what, extra, param] of [...both, ...bedrockToo]) {
    it(`Bedrock refuses ${what} naming ${param} (Claude and Nova)`, async () => {
      await refused('sim-bedrock-claude', extra, param);
      await refused('sim-bedrock-nova', extra, param);
    });
  }

  it('a whitespace-only stop: refused on a Claude model on Bedrock (Anthropic refuses it), sent to Gemini and to Nova', async () => {
    await refused('sim-bedrock-claude', { stop: ['\n'] }, 'stop');
    for (const model of ['test-gemini', 'sim-bedrock-nova']) {
      const r = await client.chat.completions.create({ model, messages: user, stop: ['\n'] });
      expect(r.choices[0].message.content, model).to.be.a('string');
    }
    const [gemini, nova] = env().sim.log.entries.map((e) => e.body as Record<string, any>);
    expect(gemini.generationConfig.stopSequences).to.deep.equal(['\n']);
    expect(nova.inferenceConfig.stopSequences).to.deep.equal(['\n']);
  });

  it('what both can honour is sent: verbosity medium, an empty logit_bias; a strict function is Converse strict tool', async () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false };
    const tools = [
      { type: 'function' as const, function: { name: 'find', parameters, strict: true } },
      { type: 'function' as const, function: { name: 'other', parameters } },
    ];
    for (const model of ['test-gemini', 'sim-bedrock-nova']) {
      const r = await client.chat.completions.create({ model, messages: user, verbosity: 'medium', logit_bias: {}, tools });
      expect(r.choices, model).to.have.length(1);
    }
    const converse = env().sim.log.entries[1].body as { toolConfig: { tools: unknown[] } };
    expect(converse.toolConfig.tools).to.deep.equal([{ toolSpec: { name: 'find', inputSchema: { json: parameters }, strict: true } }, { toolSpec: { name: 'other', inputSchema: { json: parameters } } }]);
  });
});
