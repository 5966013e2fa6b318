import { startTracing, type TracingHandle } from '@shadowplane/telemetry';
import { startOtlpReceiver, type OtlpReceiverHandle } from './otlp-receiver.js';

/** The OTEL variables {@link startOtlpTracing} sets; `close()` puts back what they were. */
const OTEL_KEYS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_BSP_SCHEDULE_DELAY'];

/** Tracing of this test process exported to a loopback OTLP receiver. */
export interface OtlpTracingHandle {
  readonly otlp: OtlpReceiverHandle;
  readonly tracing: TracingHandle;
  /** shuts tracing down, closes the receiver and restores the OTEL environment */
  close(): Promise<void>;
}

/**
 * Starts a loopback OTLP/HTTP (JSON) receiver and this process's tracing exporting to it, with a
 * 100 ms batch delay so spans arrive while the test waits. `serviceName` and `role` are the
 * exported resource's `service.name` and `shadowplane.role`.
 */
export async function startOtlpTracing(serviceName: string, role: string): Promise<OtlpTracingHandle> {
  const saved = Object.fromEntries(OTEL_KEYS.map((k) => [k, process.env[k]]));
  const otlp = await startOtlpReceiver();
  process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] = otlp.url;
  process.env['OTEL_EXPORTER_OTLP_PROTOCOL'] = 'http/json';
  process.env['OTEL_BSP_SCHEDULE_DELAY'] = '100';
  const tracing = startTracing({ serviceName, role });
  return {
    otlp,
    tracing,
    async close() {
      await tracing.shutdown();
      await otlp.close();
      for (const k of OTEL_KEYS) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    },
  };
}
