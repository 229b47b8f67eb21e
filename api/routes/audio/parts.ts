import { audioErrors } from '../../../shared/audio/errors';
import { parseLanguage } from '../../../shared/audio/languages';
import { label, paramOf, type SpooledFile, type UploadPart } from './upload';

/** The longest `prompt` accepted, in characters (Whisper reads only its last 224 tokens). */
export const MAX_PROMPT_CHARS = 4096;

export type ResponseFormat = 'json' | 'text' | 'verbose_json';

export interface TranscriptionParams {
  model: string;
  file: SpooledFile;
  language?: string;
  prompt?: string;
  temperature?: number;
  responseFormat: ResponseFormat;
  /** `word` was among `timestamp_granularities[]`. */
  words: boolean;
}

const TEXT_PARTS = new Set(['model', 'language', 'prompt', 'temperature', 'response_format', 'timestamp_granularities[]']);
/** The response formats the gateway renders (also published by the models list). */
export const FORMATS: ResponseFormat[] = ['json', 'text', 'verbose_json'];
const GRANULARITIES = ['segment', 'word'];
/** The repeatable part's name as OpenAI's clients send it (and as an error's `param` names it). */
export const GRANULARITIES_PART = 'timestamp_granularities[]';
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Checks the parts against the spec's rules, in this order: unknown parts and `stream`
 * (unsupported_parameter), then structure (file and model exactly once, no duplicate single-valued
 * part: invalid_request), then values (unsupported_parameter). Messages never quote a value.
 */
export function parseTranscriptionParts(parts: UploadPart[], file: SpooledFile | undefined): TranscriptionParams {
  for (const p of parts) {
    if (p.name === 'stream') throw audioErrors.unsupportedParameter("Transcriptions are not streamed; remove the 'stream' part.", 'stream');
    if (p.name !== 'file' && !TEXT_PARTS.has(p.name)) throw audioErrors.unsupportedParameter(`The part ${label(p.name)} is not supported.`, paramOf(p.name));
  }
  const byName = new Map<string, UploadPart[]>();
  for (const p of parts) byName.set(p.name, [...(byName.get(p.name) ?? []), p]);
  for (const [name, list] of byName) {
    if (list.length > 1 && name !== 'timestamp_granularities[]') throw audioErrors.invalidRequest(`The part ${label(name)} appears more than once.`, paramOf(name));
    if (name === 'file' ? !list[0].file : list.some((p) => p.file)) {
      throw audioErrors.invalidRequest(name === 'file' ? "The 'file' part must be a file upload with a filename." : `The part ${label(name)} must be a text field.`, paramOf(name));
    }
  }
  if (!byName.has('file')) throw audioErrors.invalidRequest("The 'file' part is required.", 'file');
  if (!file) throw audioErrors.invalidRequest("The 'file' part must be a file upload with a filename.", 'file');
  if (file.size === 0) throw audioErrors.invalidRequest("The 'file' part is empty.", 'file');
  const text = (name: string) => byName.get(name)?.[0]?.value;
  const model = text('model')?.trim();
  if (!model) throw audioErrors.invalidRequest("The 'model' part is required.", 'model');

  const out: TranscriptionParams = { model, file, responseFormat: 'json', words: false };

  const format = text('response_format');
  if (format !== undefined) {
    if (!FORMATS.includes(format as ResponseFormat)) {
      throw audioErrors.unsupportedParameter(`'response_format' must be one of ${FORMATS.join(', ')}.`, 'response_format');
    }
    out.responseFormat = format as ResponseFormat;
  }

  const language = text('language');
  if (language !== undefined) {
    const code = parseLanguage(language.trim());
    if (!code) throw audioErrors.unsupportedParameter("'language' must be an ISO-639-1 code with an optional region, such as 'en' or 'en-US'.", 'language');
    out.language = code;
  }

  const temperature = text('temperature');
  if (temperature !== undefined) {
    const v = Number(temperature.trim());
    if (!DECIMAL.test(temperature.trim()) || !(v >= 0 && v <= 1)) throw audioErrors.unsupportedParameter("'temperature' must be a number within [0, 1].", 'temperature');
    out.temperature = v;
  }

  const prompt = text('prompt');
  if (prompt !== undefined && prompt !== '') {
    if ([...prompt].length > MAX_PROMPT_CHARS) throw audioErrors.unsupportedParameter(`'prompt' is longer than ${MAX_PROMPT_CHARS} characters.`, 'prompt');
    out.prompt = prompt;
  }

  const granularities = (byName.get('timestamp_granularities[]') ?? []).map((p) => p.value ?? '');
  if (granularities.length) {
    if (granularities.some((g) => !GRANULARITIES.includes(g))) {
      throw audioErrors.unsupportedParameter("'timestamp_granularities[]' takes 'segment' or 'word'.", GRANULARITIES_PART);
    }
    if (out.responseFormat !== 'verbose_json') {
      throw audioErrors.unsupportedParameter("'timestamp_granularities[]' requires response_format=verbose_json.", GRANULARITIES_PART);
    }
    out.words = granularities.includes('word');
  }
  return out;
}
