export { default, astToString } from 'openapi-typescript'
export { createConfig, lintFromString } from '@redocly/openapi-core'
