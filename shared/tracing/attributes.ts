/**
 * Span attribute names: OpenTelemetry semantic conventions (GenAI, messaging, database, HTTP) where
 * one applies, `gateway.*` for the rest. Spelled out here rather than imported so that the hot path
 * never loads `@opentelemetry/semantic-conventions`; test/unit/tracing-attributes.test.ts checks
 * every conventional name against that package.
 */
export const A = {
  genAiOperation: 'gen_ai.operation.name',
  genAiProvider: 'gen_ai.provider.name',
  genAiRequestModel: 'gen_ai.request.model',
  genAiResponseModel: 'gen_ai.response.model',
  genAiInputTokens: 'gen_ai.usage.input_tokens',
  genAiOutputTokens: 'gen_ai.usage.output_tokens',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  messagingSystem: 'messaging.system',
  messagingDestination: 'messaging.destination.name',
  messagingOperationType: 'messaging.operation.type',
  messagingMessageId: 'messaging.message.id',
  dbSystem: 'db.system.name',
  dbOperation: 'db.operation.name',
  dbCollection: 'db.collection.name',
  dbBatchSize: 'db.operation.batch.size',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  urlPath: 'url.path',
  // the gateway's own
  requestId: 'gateway.request_id',
  orgId: 'gateway.org_id',
  lane: 'gateway.lane',
  pool: 'gateway.pool',
  queueWaitMs: 'gateway.queue.wait_ms',
  deployment: 'gateway.deployment',
  attempt: 'gateway.attempt',
  fallbackModel: 'gateway.fallback_model',
} as const;

/** `gen_ai.provider.name` of an upstream kind (the conventions' well-known values). */
export const PROVIDER_NAMES: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
};

/** `gen_ai.operation.name` of a chat job's operation. */
export const GEN_AI_OPERATIONS: Record<string, string> = {
  chat: 'chat',
  messages: 'chat',
  responses: 'chat',
  completions: 'text_completion',
  embed: 'embeddings',
  rerank: 'retrieval', // GenAI's operations have no rerank: a rerank is a retrieval step
  // images: GenAI's operation for content other than chat or completions
  generate: 'generate_content',
  edit: 'generate_content',
  transcribe: 'generate_content',
};
