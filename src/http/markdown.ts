import type { ItemJson, PageJson } from './serialize'

/**
 * Renders items as Markdown for `format=md`. User text is escaped and kept on one line (or
 * quoted line by line), so a title like "# x\n- y" cannot add headings or list entries.
 */
export function escapeInline(value: string): string {
  return (
    value
      .replace(/\r\n?|\n/g, ' ')
      // Leading spaces would start an indented code block.
      .replace(/^\s+/, '')
      // Inline syntax anywhere: emphasis, code, links, HTML, entities, tables, headings.
      .replace(/[\\`*_[\]<>&|~#]/g, (c) => `\\${c}`)
      // Block markers only matter where a line starts.
      .replace(/^([-+=>])/, '\\$1')
      .replace(/^(\d+)([.)])/, '$1\\$2')
      // GFM autolinks bare URLs, www. hosts and e-mail addresses: a title would become a link.
      .replace(/:\/\//g, '\\://')
      .replace(/\b(www)\./gi, '$1\\.')
      .replace(/@/g, '\\@')
  )
}

function code(value: string): string {
  // Identifiers are URL-safe, but keep the guarantee for any value: no backtick can close the span.
  return '`' + value.replace(/`/g, "'") + '`'
}

function quote(value: string): string {
  return value
    .split(/\r\n?|\n/)
    .map((line) => `> ${escapeInline(line)}`)
    .join('\n')
}

function itemSection(item: ItemJson, level: '##' | '#'): string {
  const lines = [`${level} ${item.title ? escapeInline(item.title) : '(untitled)'}`, '']
  lines.push(`- **id:** ${code(item.id)}`)
  lines.push(`- **type:** ${item.type}`)
  lines.push(`- **status:** ${item.status}`)
  lines.push(`- **workflow status:** ${item.workflow_status}`)
  lines.push(
    `- **claim:** ${item.claim_status}${item.lease_expires_at ? ` (lease until ${item.lease_expires_at})` : ''}`,
  )
  if (item.requested_action) lines.push(`- **requested action:** ${item.requested_action}`)
  if (item.destination_kind || item.destination_name) {
    lines.push(
      `- **destination:** ${escapeInline([item.destination_kind, item.destination_name].filter(Boolean).join(' / '))}`,
    )
  }
  lines.push(`- **tags:** ${item.tags.length ? item.tags.map(code).join(', ') : '(none)'}`)
  lines.push(`- **created:** ${item.created_at}`)
  if (item.source_image_url)
    lines.push(`- **image:** <${item.source_image_url.replace(/[<>\s]/g, encodeURIComponent)}>`)
  if (item.summary) lines.push('', escapeInline(item.summary))
  if (item.action_note) lines.push('', '**Action note:**', '', quote(item.action_note))
  if (item.resolution_note) lines.push('', '**Resolution note:**', '', quote(item.resolution_note))
  return lines.join('\n')
}

export function renderItem(item: ItemJson): string {
  return itemSection(item, '#') + '\n'
}

export function renderPage(heading: string, page: PageJson): string {
  const parts = [
    `# ${heading}`,
    '',
    `${page.items.length} item${page.items.length === 1 ? '' : 's'}.`,
  ]
  for (const item of page.items) parts.push('', itemSection(item, '##'))
  if (page.next_cursor) parts.push('', '---', '', `Next cursor: ${code(page.next_cursor)}`)
  return parts.join('\n') + '\n'
}

export const MARKDOWN = 'text/markdown; charset=utf-8'
