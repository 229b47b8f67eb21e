import { expect } from 'chai';
import { env, resetSim } from '../../helpers/harness';
import { buildOrg, type TestOrg } from '../../helpers/factories';
import { call, keyHeader } from '../../helpers/http';
import { poolModel, rndId, simDeployment } from '../../helpers/pool-models';
import { upsertProvider } from '../../../shared/catalog/catalog-ops';

const LOOKUP = { type: 'function', function: { name: 'lookup', description: 'Look it up', parameters: { type: 'object', properties: { query: { type: 'string' } } } } };
const ASK = { role: 'user', content: 'please use a tool for bees' };
type ToolCall = { id: string; type: string; function: { name: string; arguments: string } };

/**
 * The other way from signed-call-ids: a tool loop begun on an OpenAI-compatible deployment (its call
 * ids carry no thought signature) whose next step is served by a Gemini deployment (a fallback here; a
 * mixed pool draws the same). Gemini 3 refuses a current-turn function call without a signature; the
 * gateway sends Google's placeholder for it (docs/routing.md, docs/providers/gemini.md).
 */
describe('model pools: another kind’s tool calls continued on a Gemini deployment', () => {
  let o: TestOrg;
  let gemini: string;
  beforeEach(resetSim);
  before(async () => {
    o = await buildOrg(env().redis);
    gemini = `gemini-${rndId()}`;
    await upsertProvider({ name: gemini, kind: 'gemini', base_url: env().simUrl, api_key: 'gm-test-platform-key' } as never);
  });

  it('turn 1 on OpenAI, the tool result on its Gemini fallback (OpenAI failing): 200, the placeholder signature on that call', async () => {
    const oa = simDeployment('oa');
    const g = { name: 'gm', provider: gemini, upstream: `gemini-${rndId()}` };
    const model = await poolModel([oa], { fallbacks: [await poolModel([g])] });
    const chat = (messages: unknown[]) => call('POST', '/v1/chat/completions', { headers: keyHeader(o.key), json: { model, messages, tools: [LOOKUP] } });
    const first = await chat([ASK]);
    expect(first.status, first.text).to.equal(200);
    const tc = first.body.choices[0].message.tool_calls[0] as ToolCall;
    expect(tc.id).to.not.include('_sig_');
    env().sim.knobs.set(oa.upstream, { status: 503 });
    const r = await chat([ASK, { role: 'assistant', content: null, tool_calls: [tc] }, { role: 'tool', tool_call_id: tc.id, content: 'bees are sunny' }]);
    expect(r.status, r.text).to.equal(200);
    expect(r.body.choices[0].message.content).to.include('bees are sunny');
    const sent = env().sim.log.entries.find((e) => e.model === g.upstream)!.body as { contents: Array<{ parts: Array<Record<string, unknown>> }> };
    expect(sent.contents[1].parts[0]).to.deep.equal({ functionCall: { id: tc.id, name: 'lookup', args: JSON.parse(tc.function.arguments) }, thoughtSignature: 'skip_thought_signature_validator' });
  });
});
