// Everything a user of vkattn includes.
#pragma once

#include "vkattn/audio.hpp"
#include "vkattn/bdpa.hpp"
#include "vkattn/caps.hpp"
#include "vkattn/context.hpp"
#include "vkattn/error.hpp"
#include "vkattn/kvcache.hpp"
#include "vkattn/log.hpp"
#include "vkattn/plan.hpp"
#include "vkattn/recorder.hpp"
#include "vkattn/tensor.hpp"
#include "vkattn/text.hpp"
#include "vkattn/types.hpp"
#include "vkattn/version.hpp"
#include "vkattn/vision.hpp"
