import { expect } from 'chai';
import { CACHED_SCHEMA_MAX_CHARS, cachedVerdicts, refuseInvalidResponseSchema, refuseInvalidToolSchemas } from '../../../shared/json-schema/tool-schemas';
import { ApiError } from '../../../shared/errors/ApiError';

const tool = (name: string, parameters: Record<string, unknown>) => ({ type: 'function', function: { name, parameters } });
/** A valid object schema whose text is about `chars` long (one property with a long description). */
const schemaOf = (chars: number, tag: string) => ({ type: 'object', properties: { a: { type: 'string', description: `${tag}${'x'.repeat(chars)}` } } });

describe("chat tool schemas: the verdict cache keeps small schemas only", () => {
  it('a schema under the bound is kept once (its next check is a lookup); one above it is checked every time and never kept', () => {
    const start = cachedVerdicts();
    const small = schemaOf(100, `small-${Date.now()}`);
    refuseInvalidToolSchemas([tool('f', small)], 'chat');
    refuseInvalidToolSchemas([tool('f', small)], 'chat');
    expect(cachedVerdicts()).to.equal(start + 1);
    // distinct large schemas, each above the bound: none kept, so a client cannot fill the pod's memory with them
    for (let i = 0; i < 20; i++) refuseInvalidToolSchemas([tool('f', schemaOf(CACHED_SCHEMA_MAX_CHARS, `large-${i}-`))], 'chat');
    expect(cachedVerdicts()).to.equal(start + 1);
  });

  it('a large invalid schema is still refused, every time', () => {
    const bad = { type: 'object', properties: { a: { type: 'strin', description: 'x'.repeat(CACHED_SCHEMA_MAX_CHARS) } } };
    for (let i = 0; i < 2; i++) {
      expect(() => refuseInvalidToolSchemas([tool('big', bad)], 'chat')).to.throw(ApiError).with.property('code', 'invalid_function_parameters');
    }
  });

  it("a response format's schema shares the cache and its bound, kept apart from the same schema as a function's parameters", () => {
    const start = cachedVerdicts();
    const schema = schemaOf(100, `format-${Date.now()}`);
    const format = { type: 'json_schema', json_schema: { name: 'f', schema } };
    for (let i = 0; i < 2; i++) refuseInvalidResponseSchema(format, 'chat');
    expect(cachedVerdicts()).to.equal(start + 1);
    // the same text as parameters: a verdict of its own (a function's root rules differ)
    refuseInvalidToolSchemas([tool('f', schema)], 'chat');
    expect(cachedVerdicts()).to.equal(start + 2);
    for (let i = 0; i < 20; i++) refuseInvalidResponseSchema({ type: 'json_schema', json_schema: { name: 'f', schema: schemaOf(CACHED_SCHEMA_MAX_CHARS, `large-format-${i}-`) } }, 'chat');
    expect(cachedVerdicts()).to.equal(start + 2);
  });
});
