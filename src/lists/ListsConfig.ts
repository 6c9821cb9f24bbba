import { Config, Context, Effect, Layer } from "effect"

/** The contact lists' settings (docs/lists.md, README). */
export interface ListsSettings {
  /** `IMPORT_MAX_BYTES`: the largest CSV file a contact-list import accepts. */
  readonly importMaxBytes: number
}

export const listsDefaults: ListsSettings = {
  importMaxBytes: 20 * 1024 * 1024
}

export class ListsConfig extends Context.Service<ListsConfig, ListsSettings>()("lists/ListsConfig") {
  static readonly fromEnv = Config.all({
    importMaxBytes: Config.Int("IMPORT_MAX_BYTES").pipe(Config.withDefault(listsDefaults.importMaxBytes))
  })

  static readonly layer = Layer.effect(ListsConfig, Effect.orDie(ListsConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<ListsSettings> = {}) =>
    Layer.succeed(ListsConfig, { ...listsDefaults, ...overrides })
}
