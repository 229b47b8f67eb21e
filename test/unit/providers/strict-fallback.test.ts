import { expect } from 'chai';
import { strictWhereTaken } from '../../../workers/providers/openai/strict-fallback';
import { cachedVerdicts } from '../../../shared/json-schema/tool-schemas';

const fn = (name: string, parameters: Record<string, unknown>, strict?: boolean) => ({ type: 'function', function: { name, parameters, ...(strict === undefined ? {} : { strict }) } });
const closed = (props: Record<string, unknown>, required: string[]) => ({ type: 'object', properties: props, required, additionalProperties: false });

/**
 * The OpenAI chat adapter's fallback for the messages dialect's strict schemas
 * (workers/providers/openai/strict-fallback.ts): nothing done, nor copied, without a strict tool or
 * format; a verdict once per schema; the caller's body left as it was.
 */
describe('OpenAI adapter: strict schemas its strict mode refuses go non-strict', () => {
  it('a body without a strict tool or strict format is the body itself; one whose strict schemas strict mode takes too', () => {
    const plain = { model: 'm', messages: [], tools: [fn('a', closed({ x: { type: 'string' } }, []))], response_format: { type: 'json_schema', json_schema: { name: 'o', schema: { type: 'object' } } } };
    expect(strictWhereTaken(plain)).to.equal(plain);
    const taken = { model: 'm', messages: [], tools: [fn('a', closed({ x: { type: 'string' } }, ['x']), true)] };
    expect(strictWhereTaken(taken)).to.equal(taken);
  });

  it('each strict schema strict mode refuses (an optional property, a root without properties, allOf) goes strict: false, the others stay; the body sent is a copy; one verdict per schema', () => {
    const optional = closed({ x: { type: 'string' }, y: { type: 'number' } }, ['x']);
    const noProps = { type: 'object', additionalProperties: false };
    const allOf = closed({ x: { allOf: [{ type: 'string' }] } }, ['x']);
    const ok = closed({ z: { type: 'string' } }, ['z']);
    const body = {
      model: 'm',
      messages: [],
      tools: [fn('opt', optional, true), fn('none', noProps, true), fn('all', allOf, true), fn('ok', ok, true)],
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema: optional, strict: true } },
    };
    const text = JSON.stringify(body);
    const before = cachedVerdicts();
    const sent = strictWhereTaken(body) as typeof body;
    expect(sent.tools.map((t) => t.function.strict)).to.deep.equal([false, false, false, true]);
    expect(sent.tools[0].function.parameters).to.equal(optional);
    expect(sent.response_format.json_schema).to.deep.equal({ name: 'output', schema: optional, strict: false });
    expect(JSON.stringify(body), 'the caller’s body is unchanged').to.equal(text);
    // optional (shared by a tool and the format), noProps, allOf, ok: four verdicts, kept
    expect(cachedVerdicts() - before).to.equal(4);
    strictWhereTaken(body);
    expect(cachedVerdicts() - before).to.equal(4);
  });
});
