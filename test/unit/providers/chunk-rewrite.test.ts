import { expect } from 'chai';
import { rewriteChunk } from '../../../workers/providers/openai/chunk-rewrite';

/**
 * A streamed chunk passed on with only its model rewritten must be the same JSON value the full
 * path (parse, drop a null usage the caller did not ask for, set model, serialise) sends; every chunk
 * it cannot be sure of goes the full way.
 */
const PUBLIC = 'team/chat "fast" \u00e9';
const field = `"model":${JSON.stringify(PUBLIC)}`;

/** The full path of chatComplete for a chunk without a usage figure. */
function fullPath(data: string, includeUsage: boolean): unknown {
  const c = JSON.parse(data) as Record<string, unknown>;
  if ('usage' in c && !includeUsage) delete c.usage;
  c.model = PUBLIC;
  return c;
}

const rewritable: Array<[string, string]> = [
  ['OpenAI, usage asked for upstream', '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null}'],
  ['no usage key', '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}'],
  ['spaced (vLLM)', '{"id": "c", "object": "chat.completion.chunk", "created": 1, "model" : "Qwen/Qwen2.5", "choices": [{"index": 0, "delta": {"content": "x"}}], "usage": null}'],
  ['text that looks like keys', '{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"{\\"model\\":\\"evil\\",\\"usage\\":{\\"x\\":1},\\"error\\":1} [ok]"}}],"usage":null}'],
  ['escapes in the upstream model and text', '{"id":"c","model":"we\\"ird\\\\name","choices":[{"index":0,"delta":{"content":"caf\\u00e9 \\ud83d\\ude00"}}]}'],
  ['usage between keys', '{"id":"c","model":"m","usage":null,"choices":[{"index":0,"delta":{"content":"a"}}]}'],
  ['legacy completions', '{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":"a","index":0,"logprobs":null,"finish_reason":null}],"usage":null}'],
  ['tool call', '{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\\"a\\":1}"}}]}}],"usage":null}'],
];

const fullWay: Array<[string, string]> = [
  ['a usage figure', '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}'],
  ['usage inside the last content chunk', '{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":5}}'],
  ['an in-band error', '{"error":{"message":"boom","type":"internal"}}'],
  ['an error beside a model', '{"id":"c","model":"m","error":{"message":"boom"}}'],
  ['no model', '{"id":"c","choices":[{"index":0,"delta":{"content":"a"}}]}'],
  ['model after the choices', '{"id":"c","choices":[{"index":0,"delta":{"content":"a"}}],"model":"m"}'],
  ['a model key nested first', '{"id":"c","meta":{"model":"x"},"model":"m","choices":[]}'],
  ['a null usage nested only', '{"id":"c","model":"m","choices":[{"index":0,"usage":null,"delta":{}}]}'],
  ['a null usage as the first key', '{"usage":null,"id":"c","model":"m","choices":[]}'],
  ['two usages', '{"id":"c","model":"m","usage":null,"choices":[],"usage":null}'],
  ['not an object', '[{"model":"m"}]'],
  ['cut short', '{"id":"c","model":"m","choices":[{"index":0'],
];

describe('streamed chunks with only the model rewritten', () => {
  for (const includeUsage of [false, true]) {
    for (const [name, data] of rewritable) {
      it(`${name} (usage ${includeUsage ? 'asked for' : 'not asked for'}): the full path's value`, () => {
        const out = rewriteChunk(data, field, includeUsage);
        expect(out, 'took the short way').to.be.a('string');
        expect(JSON.parse(out!)).to.deep.equal(fullPath(data, includeUsage));
        expect(out).to.include(field);
      });
    }
  }

  for (const [name, data] of fullWay) {
    it(`${name}: takes the full path`, () => {
      expect(rewriteChunk(data, field, false)).to.equal(undefined);
      expect(rewriteChunk(data, field, true)).to.equal(undefined);
    });
  }

  it('keeps the upstream formatting of everything but the model', () => {
    const data = '{"id": "c", "model": "m", "choices": [{"delta": {"content": "caf\\u00e9"}}], "usage": null}';
    expect(rewriteChunk(data, '"model":"pub"', true)).to.equal('{"id": "c", "model":"pub", "choices": [{"delta": {"content": "caf\\u00e9"}}], "usage": null}');
    expect(rewriteChunk(data, '"model":"pub"', false)).to.equal('{"id": "c", "model":"pub", "choices": [{"delta": {"content": "caf\\u00e9"}}]}');
  });
});
