import { azureEndpoint } from './api';
import { createTranscription as openaiTranscription, type TranscriptionInput } from '../openai/createTranscription';
import type { UpstreamCall } from '../types';
import type { Transcript } from '../../../shared/audio/transcript';

/** Transcription on an Azure OpenAI (Whisper) deployment: OpenAI's multipart form and verbose_json answer. */
export function createTranscription(call: UpstreamCall, input: TranscriptionInput): Promise<Transcript> {
  return openaiTranscription(call, input, azureEndpoint);
}
