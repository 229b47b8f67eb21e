/**
 * Zod schemas of the constructs users give the official SDKs' schema helpers (openai/helpers/zod,
 * @anthropic-ai/sdk's betaZodTool and zodOutputFormat, an MCP server's registerTool), each with a
 * value that parses under it (the simulator answers it, so a helper's parse step runs). Every one is
 * an object at the root: the helpers themselves refuse any other root (openai: "Root schema must
 * have type: 'object'", betaZodTool: "must be an object"), as do both vendors.
 *
 * What the helpers write for them (zod 4.6.7, openai 7.60, @anthropic-ai/sdk 1.17, MCP SDK 1.32):
 * openai's strict transform a draft-07 schema, every property required (an optional field must be
 * nullable too, or the helper throws), `additionalProperties: false`, a discriminated union's
 * `oneOf` turned to `anyOf`, an intersection's `allOf` merged, recursion as `$ref` into
 * `definitions` or `#`; betaZodTool zod's draft 2020-12 output (`$defs`, `oneOf` for a
 * discriminated union); the MCP SDK zod's draft-07 input schema (optional fields left out of
 * `required`, no `additionalProperties`).
 */
import { z } from 'zod';

const Address = z.object({ street: z.string(), city: z.string().describe('the city') });
const address = { street: '1 Main St', city: 'Springfield' };

/** A tree by a getter (zod 4's recursion): `$ref` to itself. */
const Tree = z.object({
  name: z.string(),
  get children(): z.ZodArray<typeof Tree> {
    return z.array(Tree);
  },
});
type Link = { v: number; next: Link | null };
/** A list by z.lazy. */
const List: z.ZodType<Link> = z.lazy(() => z.object({ v: z.number(), next: List.nullable() }));

const Event = z.discriminatedUnion('type', [z.object({ type: z.literal('click'), x: z.number() }), z.object({ type: z.literal('key'), key: z.string() })]);

export interface Construct {
  name: string;
  schema: z.ZodObject;
  sample: Record<string, unknown>;
}

export const CONSTRUCTS: Construct[] = [
  {
    name: 'nested_objects',
    schema: z.object({ address: Address, meta: z.object({ inner: z.object({ deep: z.boolean() }) }) }),
    sample: { address, meta: { inner: { deep: true } } },
  },
  { name: 'arrays', schema: z.object({ tags: z.array(z.string()).min(1).max(5), addresses: z.array(Address), matrix: z.array(z.array(z.number())) }), sample: { tags: ['a'], addresses: [address], matrix: [[1, 2]] } },
  // openai's helper takes an optional field only when nullable (it then sends it required); betaZodTool and MCP leave it optional
  { name: 'optional_nullable', schema: z.object({ nick: z.string().nullable().optional(), middle: z.string().nullable(), both: z.string().nullish(), obj: Address.nullable() }), sample: { nick: null, middle: 'Q', both: null, obj: null } },
  { name: 'enums', schema: z.object({ color: z.enum(['red', 'green']), native: z.enum({ A: 'a', B: 'b' }), maybe: z.enum(['x', 'y']).nullable() }), sample: { color: 'red', native: 'b', maybe: null } },
  { name: 'literals', schema: z.object({ kind: z.literal('fixed'), version: z.literal(2), flag: z.literal(true) }), sample: { kind: 'fixed', version: 2, flag: true } },
  {
    name: 'unions',
    schema: z.object({ id: z.union([z.string(), z.number()]), either: z.union([z.object({ a: z.string() }), z.object({ b: z.number() }), z.null()]), lit: z.union([z.literal('a'), z.literal(1)]) }),
    sample: { id: 7, either: { b: 1 }, lit: 'a' },
  },
  { name: 'discriminated_union', schema: z.object({ event: Event, history: z.array(Event) }), sample: { event: { type: 'click', x: 1 }, history: [{ type: 'key', key: 'k' }] } },
  { name: 'recursive_getter', schema: z.object({ tree: Tree.describe('the tree'), root: Tree }), sample: { tree: { name: 'a', children: [{ name: 'b', children: [] }] }, root: { name: 'r', children: [] } } },
  { name: 'recursive_lazy', schema: z.object({ list: List }), sample: { list: { v: 1, next: { v: 2, next: null } } } },
  { name: 'descriptions', schema: z.object({ city: z.string().describe('a city name'), home: Address.describe('where one lives') }).describe('a described root'), sample: { city: 'Oslo', home: address } },
  {
    name: 'string_formats',
    schema: z.object({ when: z.iso.datetime(), day: z.iso.date(), time: z.iso.time(), email: z.email(), id: z.uuid(), site: z.url(), ip: z.ipv4(), code: z.string().min(2).max(8).regex(/^[a-z]+$/) }),
    sample: { when: '2026-01-02T03:04:05Z', day: '2026-01-02', time: '03:04:05', email: 'a@example.com', id: '123e4567-e89b-42d3-a456-426614174000', site: 'https://example.com', ip: '10.0.0.1', code: 'abc' },
  },
  { name: 'numbers', schema: z.object({ age: z.int().min(0).max(150), ratio: z.number().gt(0).lt(1), step: z.number().multipleOf(5), count: z.number().int().nonnegative() }), sample: { age: 30, ratio: 0.5, step: 10, count: 0 } },
  { name: 'defaults', schema: z.object({ level: z.number().default(3), unit: z.enum(['c', 'f']).default('c'), label: z.string().nullable().default(null) }), sample: { level: 4, unit: 'f', label: 'x' } },
  { name: 'intersection', schema: z.object({ both: z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() })) }), sample: { both: { a: 'x', b: 1 } } },
  { name: 'no_fields', schema: z.object({}), sample: {} },
];
