import { type Attributes, SpanStatusCode, trace } from '@opentelemetry/api';
import { AppError } from './core/errors.js';

/**
 * Our spans. Until tracing is started (src/http/tracing.ts) the global provider is a no-op, so
 * these cost next to nothing when OTEL_EXPORTER_OTLP_ENDPOINT is not set.
 */
export const tracer = trace.getTracer('anchorage');

/** Runs `work` in a child span of the active one; a failure marks the span (an error code, or the exception). */
export function inSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) span.setAttribute('anchorage.error', error.code);
      else span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
