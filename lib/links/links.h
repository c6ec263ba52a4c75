#pragma once
// Every link of kusari::links.

#include <kusari/links/chain.h>
#include <kusari/links/initializers.h>
#include <kusari/links/link.h>
#include <kusari/links/sequential.h>
