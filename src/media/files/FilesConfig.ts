import { Config, Context, Effect, Layer, Option } from "effect"

/** Where uploaded files are kept (docs/files.md, README). */
export interface FilesSettings {
  /** `BLOB_DIR`: keep uploaded files in this folder; none: in the database. */
  readonly blobDir: Option.Option<string>
}

export const filesDefaults: FilesSettings = {
  blobDir: Option.none()
}

export class FilesConfig extends Context.Service<FilesConfig, FilesSettings>()("files/FilesConfig") {
  static readonly fromEnv = Config.all({
    blobDir: Config.option(Config.NonEmptyString("BLOB_DIR"))
  })

  static readonly layer = Layer.effect(FilesConfig, Effect.orDie(FilesConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<FilesSettings> = {}) =>
    Layer.succeed(FilesConfig, { ...filesDefaults, ...overrides })
}
