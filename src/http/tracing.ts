import type { FastifyOtelInstrumentation } from '@fastify/otel';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Settings } from '../config.js';
import { recordSpans } from '../telemetry.js';
import { withoutPathTokens } from './secret-paths.js';

/** Set once tracing has started: the process has one tracer provider, shared by every listener. */
let instrumentation: FastifyOtelInstrumentation | undefined;

/**
 * Starts OpenTelemetry tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans go in batches to
 * the collector by OTLP over HTTP (JSON). The exporter reads the standard OTEL_EXPORTER_OTLP_*
 * variables itself (headers, timeout). Resolves to the flush-and-stop function, or undefined when off.
 */
export async function startTracing(settings: Settings): Promise<(() => Promise<void>) | undefined> {
  if (!settings.tracing) return undefined;
  // Loaded only when tracing is on: the SDK and exporter take memory a process without tracing never needs.
  const [{ FastifyOtelInstrumentation }, { OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor }, { NodeTracerProvider }, { ATTR_SERVICE_NAME }] =
    await Promise.all([
      import('@fastify/otel'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? 'anchorage' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  recordSpans();
  instrumentation = new FastifyOtelInstrumentation({
    // Probes and scrapes would drown the traces.
    ignorePaths: (route) => route.url === '/healthz' || route.url === '/readyz' || route.url === '/metrics',
    requestHook: (span, request) => {
      span.setAttribute('anchorage.request_id', request.id);
      // The instrumentation records the path as sent: not a share or unsubscribe link's token.
      span.setAttribute('url.path', withoutPathTokens(request.url));
    },
  });
  instrumentation.setTracerProvider(provider);
  return () => provider.shutdown();
}

/** The request span and its lifecycle spans (@fastify/otel), when tracing has started; register before routes. */
export const tracingPlugin = fp(async (app: FastifyInstance) => {
  if (instrumentation) await app.register(instrumentation.plugin());
});
