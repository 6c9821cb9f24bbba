import { plainRefusal } from "../../platform/Refusal.ts"

/** A speech request that cannot be served; the message names the field and the rule. */
export class InvalidSpeechRequest extends plainRefusal("Invalid", "InvalidSpeechRequest") {}

/** The speech provider kept rate limiting. */
export class SpeechProviderLimited extends plainRefusal("Limited", "SpeechProviderLimited") {}

/** The speech provider rejected the request. */
export class SpeechProviderRejected extends plainRefusal("Invalid", "SpeechProviderRejected") {}

/** The speech provider, the local voice or the audio encoding failed. */
export class SpeechFailed extends plainRefusal("Failed", "SpeechFailed") {}
