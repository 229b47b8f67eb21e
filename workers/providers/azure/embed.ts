import { azureEndpoint } from './api';
import { embed as openaiEmbed, type EmbedOutcome, type EmbedRequest } from '../openai/embed';
import type { UpstreamCall } from '../types';

/** Embeddings on an Azure OpenAI deployment (OpenAI's body and answer). */
export function embed(call: UpstreamCall, req: EmbedRequest, publicModel: string): Promise<EmbedOutcome> {
  return openaiEmbed(call, req, publicModel, azureEndpoint);
}
