/** Messages between `LocalVoice` and its worker threads (`LocalVoiceWorker.ts`). */

/** One eSpeak NG voice: its id (a language tag such as `en-us`), name and language. */
export interface EngineVoice {
  readonly id: string
  readonly name: string
  readonly language: string
}

export type LocalVoiceJob =
  | { readonly kind: "voices" }
  | {
    readonly kind: "speak"
    readonly text: string
    /** An eSpeak NG voice id. */
    readonly voice: string
    /** Words per minute, 80–450. */
    readonly rate: number
    /** 0–99. */
    readonly pitch: number
    /** Stops past this many bytes of WAV (the answer is then refused). */
    readonly maxBytes: number
  }

export type LocalVoiceReply =
  | { readonly kind: "voices"; readonly voices: ReadonlyArray<EngineVoice> }
  | { readonly kind: "speech"; readonly wav: Uint8Array; readonly seconds: number }
  | { readonly kind: "unknown-voice" }
  | { readonly kind: "too-long" }
