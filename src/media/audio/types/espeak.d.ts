/** The eSpeak NG build of `@echogarden/espeak-ng-emscripten`: what `LocalVoiceWorker.ts` uses of it. */
declare module "@echogarden/espeak-ng-emscripten" {
  export interface ESpeakVoice {
    readonly name: string
    readonly identifier: string
    readonly languages: ReadonlyArray<{ readonly priority: number; readonly name: string }>
  }
  export interface ESpeakWorker {
    list_voices(): Array<ESpeakVoice>
    /** 0 when the voice was found. */
    set_voice(name: string): number
    set_rate(wordsPerMinute: number): void
    set_pitch(pitch: number): void
    get_samplerate(): number
    /** Calls back with each chunk of 16-bit samples; returning true stops the synthesis. */
    synthesize(text: string, callback: (samples: Int16Array, events: ReadonlyArray<unknown>) => boolean): void
  }
  export interface ESpeakModule {
    readonly eSpeakNGWorker: new() => ESpeakWorker
  }
  const load: (options?: Record<string, unknown>) => Promise<ESpeakModule>
  export default load
}
