import { expect } from 'chai';
import { canonicalToMessages } from '../../../workers/providers/anthropic/to-messages';
import { canonicalToConverse } from '../../../workers/providers/bedrock/to-converse';
import { canonicalToGemini } from '../../../workers/providers/gemini/to-gemini';
import { ApiError } from '../../../shared/errors/ApiError';

const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } });
const ask = (tool_choice: unknown, tools: unknown[] = [fn('a'), fn('b')]) => ({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice });
const allowed = (mode: string, ...names: string[]) => ({ type: 'allowed_tools', allowed_tools: { mode, tools: names.map((name) => ({ type: 'function', function: { name } })) } });

const anthropic = (b: Record<string, unknown>) => canonicalToMessages(b, 'claude') as { tools: Array<{ name: string }>; tool_choice?: unknown };
const bedrock = (b: Record<string, unknown>) => canonicalToConverse(b, 'anthropic.claude-3-5-sonnet-20240620-v1:0').toolConfig!;
const gemini = (b: Record<string, unknown>) => canonicalToGemini(b) as { tools: Array<{ functionDeclarations: Array<{ name: string }> }>; toolConfig?: unknown };

function refusal(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    return e as ApiError;
  }
  throw new Error('not refused');
}

/** OpenAI's ChatCompletionAllowedToolChoice, and choices an adapter cannot express, on the translated upstreams. */
describe('tool_choice on Anthropic, Bedrock and Gemini upstreams', () => {
  it('allowed_tools required: only the listed tools are offered, and one must be called', () => {
    const b = ask(allowed('required', 'b'));
    expect(anthropic(b)).to.deep.include({ tool_choice: { type: 'any' } });
    expect(anthropic(b).tools.map((t) => t.name)).to.deep.equal(['b']);
    const conv = bedrock(b);
    expect(conv.toolChoice).to.deep.equal({ any: {} });
    expect(conv.tools!.map((t) => t.toolSpec!.name)).to.deep.equal(['b']);
    const g = gemini(b);
    expect(g.toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'ANY' } });
    expect(g.tools[0].functionDeclarations.map((d) => d.name)).to.deep.equal(['b']);
  });

  it('allowed_tools auto: the listed tools are offered, the model decides', () => {
    const b = ask(allowed('auto', 'a', 'b'), [fn('a'), fn('b'), fn('c')]);
    expect(anthropic(b).tool_choice).to.deep.equal({ type: 'auto' });
    expect(anthropic(b).tools.map((t) => t.name)).to.deep.equal(['a', 'b']);
    expect(bedrock(b).toolChoice).to.deep.equal({ auto: {} });
    expect(gemini(b).toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'AUTO' } });
    expect(gemini(b).tools[0].functionDeclarations.map((d) => d.name)).to.deep.equal(['a', 'b']);
  });

  it('a named function keeps its name on every upstream', () => {
    const b = ask({ type: 'function', function: { name: 'b' } });
    expect(anthropic(b).tool_choice).to.deep.equal({ type: 'tool', name: 'b' });
    expect(bedrock(b).toolChoice).to.deep.equal({ tool: { name: 'b' } });
    expect(gemini(b).toolConfig).to.deep.equal({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } });
  });

  it('refuses, naming tool_choice, what has no name to send: a custom tool choice, an allowed list of unknown or custom tools, a name not in tools', () => {
    const choices = [
      { type: 'custom', custom: { name: 'a' } },
      allowed('required', 'zz'),
      { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'custom', custom: { name: 'a' } }] } },
      { type: 'allowed_tools', allowed_tools: { mode: 'sometimes', tools: [{ type: 'function', function: { name: 'a' } }] } },
      { type: 'function', function: { name: 'zz' } },
      { type: 'tool' },
    ];
    for (const c of choices) {
      for (const translate of [anthropic, bedrock, gemini]) {
        const e = refusal(() => translate(ask(c)));
        expect(e, JSON.stringify(c)).to.be.instanceOf(ApiError);
        expect([e.status, e.code, e.param], JSON.stringify(c)).to.deep.equal([400, 'unsupported_parameter', 'tool_choice']);
      }
    }
  });

  it('Anthropic: a custom tool in tools is refused naming it (it was dropped, leaving tools: [])', () => {
    const e = refusal(() => anthropic(ask('auto', [fn('a'), { type: 'custom', custom: { name: 'patch' } }])));
    expect([e.status, e.code, e.message]).to.deep.equal([400, 'unsupported_parameter', "`tools[1]` of type 'custom' is not supported on this model."]);
  });
});
