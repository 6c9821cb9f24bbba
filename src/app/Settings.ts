import { Layer } from "effect"
import { DocumentsConfig, type DocumentSettings } from "../documents/DocumentsConfig.ts"
import { FilesConfig, type FilesSettings } from "../files/FilesConfig.ts"
import { JobsConfig, type JobsSettings } from "../jobs/JobsConfig.ts"
import { AppConfig, type AppSettings } from "../platform/AppConfig.ts"

/**
 * The service's settings: the kernel's (`AppConfig`) and each area's own
 * Config that the composition provides to the areas. Workers that read their
 * own Config (scheduler, campaigns, sequences, knowledge indexer, delivery)
 * provide it themselves.
 */
export const SettingsLive = Layer.mergeAll(AppConfig.layer, DocumentsConfig.layer, FilesConfig.layer, JobsConfig.layer)

/** Overrides of any setting for tests and tools: the kernel's flat, each area's under its key. */
export interface SettingOverrides extends Partial<AppSettings> {
  readonly documents?: Partial<DocumentSettings>
  readonly files?: Partial<FilesSettings>
  readonly jobs?: Partial<JobsSettings>
}

/** Settings for tests and tools: defaults, overridden where given. */
export const settingsWith = ({ documents, files, jobs, ...kernel }: SettingOverrides = {}) =>
  Layer.mergeAll(
    AppConfig.layerWith(kernel),
    DocumentsConfig.layerWith(documents),
    FilesConfig.layerWith(files),
    JobsConfig.layerWith(jobs)
  )
