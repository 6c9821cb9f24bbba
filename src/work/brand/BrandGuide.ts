import { Effect } from "effect"
import { brandKitOf, type BrandKitView } from "./BrandKit.ts"

/**
 * What a model that writes for a company is told about its brand, and the
 * brand's colours and fonts as CSS variables for HTML work. The kit's values
 * were validated on PUT (colours `#RGB`/`#RRGGBB`, font lists without `;{}<>`),
 * so they can be written into CSS as they are.
 */

export interface BrandGuide {
  /** A section to append to a system prompt; "" when the kit is empty. */
  readonly prompt: string
  /** `:root{--brand-primary:#…;…}`; "" when the kit has no colours or fonts. */
  readonly css: string
}

const colorNames = ["primary", "secondary", "accent", "background", "text"] as const
const fontNames = ["heading", "body"] as const

/** The kit's colours and fonts as CSS custom properties on `:root`. */
export const brandCss = (kit: BrandKitView): string => {
  const declarations = [
    ...colorNames.flatMap((name) => kit.colors[name] === undefined ? [] : [`--brand-${name}:${kit.colors[name]}`]),
    ...fontNames.flatMap((name) => kit.fonts[name] === undefined ? [] : [`--brand-font-${name}:${kit.fonts[name]!.trim()}`])
  ]
  return declarations.length === 0 ? "" : `:root{${declarations.join(";")}}`
}

const list = (items: ReadonlyArray<string> | undefined) => (items ?? []).map((item) => `  - ${item}`).join("\n")

/** The kit in words, for a system prompt. */
export const brandPrompt = (kit: BrandKitView): string => {
  const lines: Array<string> = []
  if (kit.name !== null) lines.push(`You write for ${kit.name}; use this name for the brand.`)
  if (kit.voice.tone !== undefined && kit.voice.tone.trim() !== "") lines.push(`Tone of voice: ${kit.voice.tone}.`)
  if (kit.voice.audience !== undefined && kit.voice.audience.trim() !== "") lines.push(`Audience: ${kit.voice.audience}.`)
  if ((kit.voice.dos ?? []).length > 0) lines.push(`Do:\n${list(kit.voice.dos)}`)
  if ((kit.voice.donts ?? []).length > 0) lines.push(`Don't:\n${list(kit.voice.donts)}`)
  const colors = colorNames.flatMap((name) => kit.colors[name] === undefined ? [] : [`${name} ${kit.colors[name]}`])
  if (colors.length > 0) lines.push(`Brand colours: ${colors.join(", ")}.`)
  const fonts = fontNames.flatMap((name) => kit.fonts[name] === undefined ? [] : [`${name}: ${kit.fonts[name]}`])
  if (fonts.length > 0) lines.push(`Brand fonts: ${fonts.join("; ")}.`)
  if (kit.logoUrl !== null) lines.push(`Logo image: ${kit.logoUrl}`)
  const links = Object.entries(kit.links)
  if (links.length > 0) lines.push(`Links: ${links.map(([name, url]) => `${name} ${url}`).join(", ")}`)
  return lines.length === 0 ? "" : `## Brand kit\nFollow the company's brand kit.\n${lines.join("\n")}`
}

/** A company's brand guide: its kit's prompt section and CSS variables. */
export const brandGuide = (companyId: string) =>
  Effect.map(brandKitOf(companyId), (kit): BrandGuide => ({ prompt: brandPrompt(kit), css: brandCss(kit) }))

/** `system` followed by the brand's section, when the kit has one. */
export const withBrand = (system: string, guide: BrandGuide) => guide.prompt === "" ? system : `${system}\n\n${guide.prompt}`
