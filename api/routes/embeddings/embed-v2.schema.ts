import { invalid, isInt, kindOf, rejectUnknownFields, requireModel } from './errors';
import type { EmbeddingsRequest } from './embeddings.schema';
import { errors } from '../../../shared/errors/codes';
import { embedV2Texts, type EmbedV2Texts } from './embed-v2-inputs';
import { EMBEDDING_TYPES, encodeAll, isComputed, type EmbeddingType } from '../../../shared/embeddings/encodings';

/** Cohere's v2 embed fields (`POST /v2/embed`, `CohereClientV2.embed`). */
export const EMBED_V2_FIELDS = ['model', 'input_type', 'texts', 'images', 'inputs', 'max_tokens', 'output_dimension', 'embedding_types', 'truncate', 'priority'] as const;
/** Cohere's v1 embed fields (`POST /v1/embed`, `CohereClient.embed`). */
export const EMBED_V1_FIELDS = ['model', 'input_type', 'texts', 'images', 'embedding_types', 'truncate'] as const;

const INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering', 'image'];

export interface EmbedV2Request extends EmbeddingsRequest {
  input: string[];
  /** The field the texts came in: `texts`, or `inputs` (each input's text parts joined); errors name it. */
  inputField: EmbedV2Texts['field'];
  inputType?: 'search_document' | 'search_query' | 'classification' | 'clustering';
  /** Whether `embedding_types` was given (v1 answers `embeddings_floats` without it). */
  typesGiven: boolean;
  /** `embedding_types` as asked, each once, in the caller's order (`['float']` when omitted). */
  embeddingTypes: EmbeddingType[];
  /** `max_tokens`: the caller's cap on each text's tokens (a text past it is refused, never truncated). */
  maxTokens?: number;
}

const what = (v: unknown) => (typeof v === 'number' || typeof v === 'string' ? JSON.stringify(v) : kindOf(v));

/**
 * Cohere's v2 embed request, as the gateway serves it (docs/embeddings.md): text only (`texts`, 1 to
 * 96 non-empty strings, or `inputs` of text parts: embed-v2-inputs.ts; `images` and image parts refused), `input_type` required and one of Cohere's
 * (`image` refused, there being no images; sent to a Cohere upstream), `embedding_types` any of Cohere's (float when
 * omitted; the route checks that the model can give `int8`/`uint8`), `output_dimension` as `dimensions`. Inputs
 * are never truncated, as on `/v1/embeddings`: `truncate` keeps Cohere's type and changes nothing (a
 * text past the model's limit, or past `max_tokens` when given, is 400 `input_too_long` whatever it
 * says: Cohere would embed only `max_tokens` of it), and `priority` is accepted and ignored. Every refusal is 400 `invalid_input` naming the field.
 * `version` 1: Cohere's v1 embed (`POST /v1/embed`): its fields only, `input_type` optional (a Cohere
 * upstream is then sent the default, `search_document`).
 */
export function parseEmbedV2(body: Record<string, unknown>, version: 1 | 2 = 2): EmbedV2Request {
  rejectUnknownFields(body, version === 1 ? EMBED_V1_FIELDS : EMBED_V2_FIELDS);
  const model = requireModel(body);
  if (body.images != null) throw invalid('invalid_input', "'images' is not supported: the gateway embeds text; send 'texts' (or text 'inputs').");
  const it = body.input_type;
  if ((it === undefined || it === null) && version === 2) throw invalid('invalid_input', `'input_type' is required: one of ${INPUT_TYPES.join(', ')}.`);
  if (it != null && (typeof it !== 'string' || !INPUT_TYPES.includes(it))) throw invalid('invalid_input', `'input_type' must be one of ${INPUT_TYPES.join(', ')}, not ${what(it)}.`);
  if (it === 'image') throw invalid('invalid_input', "'input_type' 'image' needs images, which the gateway does not embed; send 'texts' with a text input type.");
  const { texts, field } = embedV2Texts(body, version);
  const types = body.embedding_types ?? ['float'];
  if (!Array.isArray(types) || types.length === 0 || !types.every((t) => typeof t === 'string' && (EMBEDDING_TYPES as readonly string[]).includes(t))) {
    throw invalid('invalid_input', `'embedding_types' must be a non-empty array of ${EMBEDDING_TYPES.join(', ')}.`);
  }
  const dims = body.output_dimension ?? undefined;
  if (dims !== undefined && !isInt(dims, 1)) throw invalid('invalid_input', `'output_dimension' must be a positive integer, not ${what(dims)}.`);
  const { truncate: tr, max_tokens: mt, priority: pr } = body;
  if (tr != null && !['NONE', 'START', 'END'].includes(tr as string)) throw invalid('invalid_input', `'truncate' must be NONE, START or END, not ${what(tr)}.`);
  if (mt != null && !isInt(mt, 1)) throw invalid('invalid_input', `'max_tokens' must be a positive integer, not ${what(mt)}.`);
  if (pr != null && !isInt(pr, 0, 999)) throw invalid('invalid_input', `'priority' must be an integer from 0 to 999, not ${what(pr)}.`);
  return {
    model,
    input: texts,
    inputField: field,
    encodingFormat: 'float',
    dimensions: dims as number | undefined,
    inputType: (it ?? undefined) as EmbedV2Request['inputType'],
    typesGiven: body.embedding_types != null,
    embeddingTypes: [...new Set(types as EmbeddingType[])],
    maxTokens: (mt ?? undefined) as number | undefined,
  };
}

/** What the embeddings job answers: OpenAI's body (its `data` in input order: every adapter returns it so), and a Cohere upstream's own typed embeddings. */
export interface EmbedJobAnswer {
  data: Array<{ embedding: unknown }>;
  usage?: { prompt_tokens?: number };
  /** The types a Cohere upstream computed (`embedding_types` besides float), as it sent them. */
  by_type?: Partial<Record<EmbeddingType, unknown[]>>;
}

/**
 * The embeddings job's answer as Cohere's v2 EmbedByTypeResponse: `embeddings` holds each type asked
 * for, in the caller's order; a type the upstream computed (a Cohere upstream) as it sent it, any other
 * from the floats (base64, binary, ubinary: shared/embeddings/encodings.ts).
 */
export function embedV2Answer(id: string, texts: string[], types: EmbeddingType[], result: EmbedJobAnswer, version: 1 | 2 = 2, typesGiven = true) {
  const floats = result.data.map((r) => r.embedding as number[]);
  const meta = { api_version: { version: String(version) }, billed_units: { input_tokens: result.usage?.prompt_tokens ?? 0 } };
  // v1 without embedding_types: EmbedFloatsResponse, the vectors themselves
  if (version === 1 && !typesGiven) return { id, embeddings: floats, texts, meta, response_type: 'embeddings_floats' as const };
  const embeddings: Partial<Record<EmbeddingType, unknown[]>> = {};
  for (const t of types) {
    const given = result.by_type?.[t];
    if (given) embeddings[t] = given;
    else if (isComputed(t)) embeddings[t] = encodeAll(t, floats);
    else throw errors.upstreamError(`The upstream answered without the '${t}' embeddings asked for.`);
  }
  return {
    id,
    embeddings,
    texts,
    meta,
    response_type: 'embeddings_by_type' as const,
  };
}
