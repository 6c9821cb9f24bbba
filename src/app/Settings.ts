import { Layer } from "effect"
import { AudioConfig } from "../media/audio/AudioConfig.ts"
import { ExtractConfig } from "../media/browser/ExtractConfig.ts"
import { RenderConfig } from "../media/canvases/RenderConfig.ts"
import { ContentConfig } from "../work/content/ContentConfig.ts"
import { DesignConfig } from "../work/design/DesignConfig.ts"
import { DomainsConfig } from "../outreach/domains/DomainsConfig.ts"
import { DocumentsConfig } from "../work/documents/DocumentsConfig.ts"
import { FilesConfig } from "../media/files/FilesConfig.ts"
import { ImagesConfig } from "../media/images/ImagesConfig.ts"
import { InboxConfig } from "../outreach/inbox/InboxConfig.ts"
import { JobsConfig } from "../work/jobs/JobsConfig.ts"
import { LeadsConfig } from "../outreach/leads/LeadsConfig.ts"
import { MailConfig } from "../outreach/mail/MailConfig.ts"
import { OutreachConfig } from "../outreach/messages/OutreachConfig.ts"
import { AppConfig, type AppSettings } from "../platform/AppConfig.ts"
import { AgentsConfig } from "../work/agents/AgentsConfig.ts"
import { BrowserConfig } from "../platform/BrowserPool.ts"
import { OutboundConfig } from "../platform/OutboundPolicy.ts"
import { PagesConfig } from "../media/pages/PagesConfig.ts"
import { TemplatesConfig } from "../outreach/templates/TemplatesConfig.ts"
import { UsageConfig } from "../accounts/usage/UsageConfig.ts"

/**
 * The service's settings: the kernel's (`AppConfig`) and each area's own
 * Config that the composition provides to the areas, listed once here under
 * the key tests and tools override it by. Workers that read their own Config
 * (scheduler, campaigns, sequences, knowledge indexer, delivery) provide it
 * themselves, from the same environment.
 */
const configs = {
  agents: AgentsConfig,
  audio: AudioConfig,
  browser: BrowserConfig,
  content: ContentConfig,
  design: DesignConfig,
  documents: DocumentsConfig,
  domains: DomainsConfig,
  extract: ExtractConfig,
  files: FilesConfig,
  images: ImagesConfig,
  inbox: InboxConfig,
  jobs: JobsConfig,
  leads: LeadsConfig,
  mail: MailConfig,
  outbound: OutboundConfig,
  outreach: OutreachConfig,
  pages: PagesConfig,
  render: RenderConfig,
  templates: TemplatesConfig,
  usage: UsageConfig
} as const

type Configs = typeof configs
type Provided = Layer.Success<Configs[keyof Configs]["layer"]>

/** Each Config's layer as one of the union (a layer's output type is invariant, so the widening is stated). */
const widened = (layer: Configs[keyof Configs]["layer"]) => layer as Layer.Layer<Provided>

export const SettingsLive: Layer.Layer<AppConfig | Provided> = Layer.mergeAll(
  AppConfig.layer,
  ...Object.values(configs).map((config) => widened(config.layer))
)

/** Overrides of any setting for tests and tools: the kernel's flat, each area's under its key. */
export type SettingOverrides = Partial<AppSettings> & {
  readonly [K in keyof Configs]?: Parameters<Configs[K]["layerWith"]>[0]
}

const isAreaKey = (key: string): key is keyof Configs => key in configs

/** Settings for tests and tools: defaults, overridden where given. */
export const settingsWith = (overrides: SettingOverrides = {}): Layer.Layer<AppConfig | Provided> => {
  const kernel: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(overrides)) if (!isAreaKey(key)) kernel[key] = value
  return Layer.mergeAll(
    AppConfig.layerWith(kernel as Partial<AppSettings>),
    ...Object.entries(configs).map(([key, config]) =>
      widened((config.layerWith as (overrides: object) => Configs[keyof Configs]["layer"])(overrides[key as keyof Configs] ?? {}))
    )
  )
}
