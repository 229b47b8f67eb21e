import { expect } from 'chai';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { A, GEN_AI_OPERATIONS, PROVIDER_NAMES } from '../../../shared/tracing/attributes';
import { jobUsage } from '../../../shared/metering/usage';
import { traceUsage } from '../../../shared/tracing/job-spans';
import { childSpan, NOOP, span, traceIdOf, tracingOn, tracingRequested } from '../../../shared/tracing/trace';

describe('tracing: attribute names and the trace id on the usage record', () => {
  it("every conventional attribute name is the semantic-conventions package's", () => {
    const conventional: Record<string, string> = {
      genAiOperation: semconv.ATTR_GEN_AI_OPERATION_NAME,
      genAiProvider: semconv.ATTR_GEN_AI_PROVIDER_NAME,
      genAiRequestModel: semconv.ATTR_GEN_AI_REQUEST_MODEL,
      genAiResponseModel: semconv.ATTR_GEN_AI_RESPONSE_MODEL,
      genAiInputTokens: semconv.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
      genAiOutputTokens: semconv.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
      serverAddress: semconv.ATTR_SERVER_ADDRESS,
      serverPort: semconv.ATTR_SERVER_PORT,
      messagingSystem: semconv.ATTR_MESSAGING_SYSTEM,
      messagingDestination: semconv.ATTR_MESSAGING_DESTINATION_NAME,
      messagingOperationType: semconv.ATTR_MESSAGING_OPERATION_TYPE,
      messagingMessageId: semconv.ATTR_MESSAGING_MESSAGE_ID,
      dbSystem: semconv.ATTR_DB_SYSTEM_NAME,
      dbOperation: semconv.ATTR_DB_OPERATION_NAME,
      dbCollection: semconv.ATTR_DB_COLLECTION_NAME,
      dbBatchSize: semconv.ATTR_DB_OPERATION_BATCH_SIZE,
      httpMethod: semconv.ATTR_HTTP_REQUEST_METHOD,
      httpRoute: semconv.ATTR_HTTP_ROUTE,
      httpStatus: semconv.ATTR_HTTP_RESPONSE_STATUS_CODE,
      urlPath: semconv.ATTR_URL_PATH,
    };
    for (const [k, name] of Object.entries(conventional)) expect(A[k as keyof typeof A], k).to.equal(name);
    for (const k of Object.keys(A)) if (!(k in conventional)) expect(A[k as keyof typeof A], k).to.match(/^gateway\./);
    expect(Object.values(PROVIDER_NAMES).sort()).to.deep.equal(
      [semconv.GEN_AI_PROVIDER_NAME_VALUE_OPENAI, semconv.GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC, semconv.GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI, semconv.GEN_AI_PROVIDER_NAME_VALUE_AWS_BEDROCK, semconv.GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI].sort(),
    );
    expect(new Set(Object.values(GEN_AI_OPERATIONS))).to.deep.equal(
      new Set([semconv.GEN_AI_OPERATION_NAME_VALUE_CHAT, semconv.GEN_AI_OPERATION_NAME_VALUE_TEXT_COMPLETION, semconv.GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS, semconv.GEN_AI_OPERATION_NAME_VALUE_RETRIEVAL, semconv.GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT]),
    );
  });

  it("the usage record gets the job's trace id from its propagated context even in a worker that does not trace", () => {
    const job = { requestId: 'req_1', orgId: 'o', projectId: null, apiKeyId: null, publicModel: 'm', lane: 'interactive' };
    const usage = jobUsage(job, 'chat', { inputTokens: 1 });
    traceUsage(usage, NOOP, NOOP, traceIdOf({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }));
    expect(usage.traceId).to.equal('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(usage.traceParent, 'no span of its own: nothing for the drainer to continue').to.equal(undefined);
    const untraced = jobUsage(job, 'chat', {});
    traceUsage(untraced, NOOP, NOOP, traceIdOf(undefined));
    expect(untraced).to.not.have.property('traceId');
    for (const bad of ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01', 'junk']) {
      expect(traceIdOf({ traceparent: bad }), bad).to.equal(undefined);
    }
  });

  it('tracing is requested by an OTLP endpoint, and OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns it off', () => {
    expect(tracingRequested({})).to.equal(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).to.equal(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).to.equal(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).to.equal(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).to.equal(false);
  });

  it('off, every span is the one frozen no-op: nothing allocated, nothing recorded, no context to carry', () => {
    expect(tracingOn()).to.equal(false);
    const a = span('a', undefined, { kind: 'server' });
    const b = childSpan('b', a);
    expect(a).to.equal(NOOP);
    expect(b).to.equal(NOOP);
    expect(Object.isFrozen(NOOP)).to.equal(true);
    expect(a.recording).to.equal(false);
    expect(a.carrier()).to.equal(undefined);
    expect(a.traceId()).to.equal(undefined);
  });
});
