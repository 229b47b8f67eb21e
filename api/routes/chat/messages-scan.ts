import { isRecord } from '../../../shared/is-record';

/**
 * What one pass over a chat body's messages finds, for the two checks on the platform's credential
 * that read their parts (api/routes/chat/router.ts): the first id the upstream would resolve in its
 * account (refused: shared-account-ids.ts) and the first `input_audio` part (priced apart:
 * shared/catalog/audio-prices.ts). One pass, since every part is visited for the first anyway.
 */
export interface MessagesScan {
  /** The first id named, in order: a message's assistant `audio.id` (before its parts), or a part's file id. */
  sharedId?: { kind: 'audio' | 'file'; id: unknown; param: string };
  /** The place of the first `input_audio` part before it (`messages[i].content[j]`). */
  inputAudio?: string;
}

/** The common scan: nothing found (shared, not a new object per request). */
const NOTHING: MessagesScan = Object.freeze({});

/** Scans the messages' parts once; stops at the first shared id (it is refused). */
export function scanMessages(body: Record<string, unknown>): MessagesScan {
  let inputAudio: string | undefined;
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isRecord(m)) continue;
    const audio = m.audio;
    if (isRecord(audio) && given(audio.id)) return { sharedId: { kind: 'audio', id: audio.id, param: `messages[${i}].audio.id` }, inputAudio };
    if (!Array.isArray(m.content)) continue;
    for (let j = 0; j < m.content.length; j++) {
      const p: unknown = m.content[j];
      if (inputAudio === undefined && isRecord(p) && p.type === 'input_audio') inputAudio = `messages[${i}].content[${j}]`;
      const found = fileIdOf(p);
      if (found) return { sharedId: { kind: 'file', id: found.id, param: `messages[${i}].content[${j}].${found.field}` }, inputAudio };
    }
  }
  return inputAudio === undefined ? NOTHING : { inputAudio };
}

export const given = (v: unknown) => v !== undefined && v !== null;

/**
 * A part's file id and its field, whatever the part's type: `file_id` of the part itself (an
 * `input_file` or `input_image` part; Mistral's `{type: "file", file_id}` chunk, which its preset
 * passes on) or of an object in it (`file.file_id`, OpenAI's file part).
 */
function fileIdOf(p: unknown): { id: unknown; field: string } | undefined {
  if (!isRecord(p)) return undefined;
  if (given(p.file_id)) return { id: p.file_id, field: 'file_id' };
  for (const k in p) {
    const v = Object.hasOwn(p, k) ? p[k] : undefined;
    if (isRecord(v) && given(v.file_id)) return { id: v.file_id, field: `${k}.file_id` };
  }
  return undefined;
}
