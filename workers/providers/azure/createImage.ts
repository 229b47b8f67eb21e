import { azureEndpoint } from './api';
import { createImage as openaiCreateImage } from '../openai/createImage';
import type { UpstreamCall } from '../types';

/** Image generation on an Azure OpenAI deployment (OpenAI's body and answer). */
export function createImage(call: UpstreamCall, body: Record<string, unknown>, sendResponseFormat = true): Promise<Buffer[]> {
  return openaiCreateImage(call, body, sendResponseFormat, azureEndpoint);
}
