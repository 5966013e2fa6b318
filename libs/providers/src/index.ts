// The one public surface of @shadowplane/providers: wire adapters, SSE parsing, usage and cost.
export { createResponseParser, parseResponse, resolveCost, PROVIDER_ZERO_WITH_TOKENS } from './response.js';
export type { ParsedResponse, StreamParser, ToolCall } from './response.js';
export type { ResponseMeta } from './headers.js';
export { headerValue } from './headers.js';
export { classifyError, errorClassForStatus, errorClassForType, retryAfterSeconds } from './errors.js';
export type { ErrorClassification } from './errors.js';
export { rateCardCost, providerReportedCost, usdToMicroUsdCeil } from './cost.js';
export { anthropicUsage, openaiChatUsage, openaiResponsesUsage } from './usage.js';
export { createSseDecoder } from './sse.js';
export type { SseDecoder, SseEvent } from './sse.js';
export { detectApi, requestPromptText, requestModel, requestMaxOutputTokens, isStreamingRequest } from './request.js';
export {
  WIRE_ADAPTERS,
  adapterFor,
  baseUrlProblem,
  requestUrl,
  requestHeaders,
  promptTokensUpperBound,
  attemptUpperBoundMicroUsd,
} from './adapters.js';
export type { WireAdapter } from './adapters.js';
export { prepareArmRequest } from './translate.js';
export { chatToMessages } from './chat-to-messages.js';
export { messagesToChat } from './messages-to-chat.js';
export type { PreparedRequest, ArmTarget } from './translate.js';
