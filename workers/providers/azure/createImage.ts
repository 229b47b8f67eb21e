import { azureEndpoint } from './api';
import { createImage as openaiCreateImage } from '../openai/createImage';
import type { UpstreamImages } from '../openai/images';
import type { UpstreamCall } from '../types';

/** Image generation on an Azure OpenAI deployment (OpenAI's body and answer, read the same way). */
export function createImage(call: UpstreamCall, body: Record<string, unknown>, sendResponseFormat = true): Promise<UpstreamImages> {
  return openaiCreateImage(call, body, sendResponseFormat, azureEndpoint);
}
