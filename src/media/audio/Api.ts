import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { acceptingUnknownFields } from "../../http/StrictInput.ts"
import { BadRequest, Forbidden, InternalError, RateLimited } from "../../platform/Errors.ts"
import { NonBlankText } from "../../platform/Schemas.ts"

export const audioFormats = ["mp3", "wav", "opus"] as const
export type AudioFormat = (typeof audioFormats)[number]

/** OpenAI's `POST /v1/audio/speech` body (docs/audio.md: what each field does here). */
export const SpeechRequest = Schema.Struct({
  model: Schema.String.annotate({ description: "`tts-1`, `tts-1-hd`, `gpt-4o-mini-tts`, `local`, or a model of `SPEECH_MODELS`" }),
  input: NonBlankText(4_096).annotate({ description: "The text to speak, at most 4,096 characters" }),
  voice: Schema.String.annotate({ description: "A voice of `GET /audio/voices`" }),
  response_format: Schema.optional(Schema.Literals(audioFormats)).annotate({ description: "`mp3` (default), `wav` or `opus` (in Ogg)" }),
  speed: Schema.optional(Schema.Number.check(Schema.isGreaterThanOrEqualTo(0.25), Schema.isLessThanOrEqualTo(4)))
    .annotate({ description: "0.25–4 (default 1)" })
}).annotate({ identifier: "SpeechRequest" })

export const Voice = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  language: Schema.String
}).annotate({ identifier: "Voice" })

export const VoiceList = Schema.Struct({ voices: Schema.Array(Voice) }).annotate({ identifier: "VoiceList" })

const errors = [BadRequest, Forbidden, RateLimited, InternalError]

/** OpenAI's body shape: unknown fields are accepted and ignored, as on the model gateway. */
export class AudioApi extends HttpApiGroup.make("audio")
  .annotateMerge(OpenApi.annotations({
    description: "Audio: text to speech in OpenAI's shape (for OpenAI SDKs pointed at `/api/v0`), through an OpenAI-compatible provider or the offline local voice (eSpeak NG).",
    override: { "x-displayName": "Audio" }
  })).add(
  HttpApiEndpoint.post("speech", "/audio/speech", {
    payload: SpeechRequest,
    success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "audio/mpeg" })),
    error: errors
  }).pipe(described({
    summary: "Speak text",
    does: "OpenAI's speech API: answers the audio of `input` (`audio/mpeg`, `audio/wav` or `audio/ogg` with Opus). Through the configured OpenAI-compatible speech provider (`SPEECH_BASE_URL`, `SPEECH_API_KEY`), else the offline local voice (eSpeak NG, every speech model name served by it). Billed per 1,000 characters under `audio` (`SPEECH_CREDITS_PER_1000_CHARS`, or `LOCAL_SPEECH_CREDITS_PER_1000_CHARS` for the local voice), held before speaking. Unknown fields are ignored, as OpenAI's API grows.",
    who: "audio:use",
    errors: {
      400: "an empty or over-long input, an unknown model or voice, a format other than mp3, wav and opus, a speed outside 0.25–4, or text the provider refuses",
      403: "the role or plan lacks `audio`, or the organization's credits do not cover the input",
      429: "the provider kept rate limiting",
      500: "the provider, the local voice or the audio encoding failed"
    }
  })),
  HttpApiEndpoint.get("voices", "/audio/voices", {
    success: VoiceList,
    error: errors
  }).pipe(described({
    summary: "List voices",
    does: "The voices `POST /audio/speech` takes: the provider's (`SPEECH_VOICES`, else OpenAI's), or the local voice's — OpenAI's voice names, each an English voice of its own pitch, then eSpeak NG's languages (`en-us`, `de`, `fr`, …).",
    who: "audio:use"
  }))
).middleware(Authentication).prefix("/api/v0").annotateMerge(acceptingUnknownFields) {}
