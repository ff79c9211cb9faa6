// Metron view: five tables served by MetronViewMessageHandler (ONOS table protocol), refreshed by the
// table builder's periodic polling so core load stays current.
(function () {
    'use strict';

    function table(tag) {
        return ['$scope', 'TableBuilderService', function ($scope, tbs) {
            tbs.buildTable({ scope: $scope, tag: tag });
        }];
    }

    angular.module('ovMetron', [])
        .controller('OvMetronCtrl', table('metronChain'))
        .controller('OvMetronClassCtrl', table('metronClass'))
        .controller('OvMetronCoreCtrl', table('metronCore'))
        .controller('OvMetronGroupCtrl', table('metronGroup'))
        .controller('OvMetronScalingCtrl', table('metronScaling'));
}());
