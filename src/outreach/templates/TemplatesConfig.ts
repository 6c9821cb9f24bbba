import { Config, Context, Effect, Layer } from "effect"

/** The templates' settings (README). */
export interface TemplatesSettings {
  /** `UPLOAD_MAX_BYTES`: the largest image a template upload accepts. */
  readonly uploadMaxBytes: number
}

export const templatesDefaults: TemplatesSettings = {
  uploadMaxBytes: 5 * 1024 * 1024
}

export class TemplatesConfig extends Context.Service<TemplatesConfig, TemplatesSettings>()("templates/TemplatesConfig") {
  static readonly fromEnv = Config.all({
    uploadMaxBytes: Config.Int("UPLOAD_MAX_BYTES").pipe(Config.withDefault(templatesDefaults.uploadMaxBytes))
  })

  static readonly layer = Layer.effect(TemplatesConfig, Effect.orDie(TemplatesConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<TemplatesSettings> = {}) =>
    Layer.succeed(TemplatesConfig, { ...templatesDefaults, ...overrides })
}
