import { Layer } from "effect"
import { ContentConfig, type ContentSettings } from "../content/ContentConfig.ts"
import { DesignConfig, type DesignSettings } from "../design/DesignConfig.ts"
import { DocumentsConfig, type DocumentSettings } from "../documents/DocumentsConfig.ts"
import { FilesConfig, type FilesSettings } from "../files/FilesConfig.ts"
import { JobsConfig, type JobsSettings } from "../jobs/JobsConfig.ts"
import { LeadsConfig, type LeadsSettings } from "../leads/LeadsConfig.ts"
import { MailConfig, type OutgoingMailSettings } from "../mail/MailConfig.ts"
import { AppConfig, type AppSettings } from "../platform/AppConfig.ts"
import { OutboundConfig, type OutboundSettings } from "../platform/OutboundPolicy.ts"
import { TemplatesConfig, type TemplatesSettings } from "../templates/TemplatesConfig.ts"
import { UsageConfig, type UsageSettings } from "../usage/UsageConfig.ts"

/**
 * The service's settings: the kernel's (`AppConfig`) and each area's own
 * Config that the composition provides to the areas. Workers that read their
 * own Config (scheduler, campaigns, sequences, knowledge indexer, delivery)
 * provide it themselves.
 */
export const SettingsLive = Layer.mergeAll(
  AppConfig.layer,
  ContentConfig.layer,
  DesignConfig.layer,
  DocumentsConfig.layer,
  FilesConfig.layer,
  JobsConfig.layer,
  LeadsConfig.layer,
  MailConfig.layer,
  OutboundConfig.layer,
  TemplatesConfig.layer,
  UsageConfig.layer
)

/** Overrides of any setting for tests and tools: the kernel's flat, each area's under its key. */
export interface SettingOverrides extends Partial<AppSettings> {
  readonly content?: Partial<ContentSettings>
  readonly design?: Partial<DesignSettings>
  readonly documents?: Partial<DocumentSettings>
  readonly files?: Partial<FilesSettings>
  readonly jobs?: Partial<JobsSettings>
  readonly leads?: Partial<LeadsSettings>
  readonly mail?: Partial<OutgoingMailSettings>
  readonly outbound?: Partial<OutboundSettings>
  readonly templates?: Partial<TemplatesSettings>
  readonly usage?: Partial<UsageSettings>
}

/** Settings for tests and tools: defaults, overridden where given. */
export const settingsWith = ({ content, design, documents, files, jobs, leads, mail, outbound, templates, usage, ...kernel }: SettingOverrides = {}) =>
  Layer.mergeAll(
    AppConfig.layerWith(kernel),
    ContentConfig.layerWith(content),
    DesignConfig.layerWith(design),
    DocumentsConfig.layerWith(documents),
    FilesConfig.layerWith(files),
    JobsConfig.layerWith(jobs),
    LeadsConfig.layerWith(leads),
    MailConfig.layerWith(mail),
    OutboundConfig.layerWith(outbound ?? {}),
    TemplatesConfig.layerWith(templates),
    UsageConfig.layerWith(usage)
  )
