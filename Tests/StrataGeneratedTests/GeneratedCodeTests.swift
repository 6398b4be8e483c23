import Strata
import Testing
