#!/usr/bin/env node
'use strict';
require('../lib/launch.js').launch('mcp-mock');
